"""The one action parser (models.actions): verb, object, target, phrases, argument words, normalisation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.actions import (
    ARTICLES,
    FILLERS,
    PREPOSITIONS,
    Action,
    argument_words,
    normalise,
    parse_action,
    text_words,
    verb_of,
)

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
noun = word.filter(lambda w: w not in PREPOSITIONS and w not in ARTICLES and w != "of")


@pytest.mark.parametrize(
    "action, verb, obj, prep, target",
    [
        ("put dirty plate in dishwasher", "put", "dirty plate", "in", "dishwasher"),
        ("put box of cereal on shelf", "put", "box of cereal", "on", "shelf"),  # "of" is part of a name
        ("take paper towel from counter", "take", "paper towel", "from", "counter"),
        ("put apple under table", "put", "apple", "under", "table"),
        ("take apple", "take", "apple", "", ""),
        ("look around", "look", "around", "", ""),
        ("go to kitchen", "go", "to kitchen", "", ""),  # a preposition needs words before it to split
        ("put in", "put", "in", "", ""),  # ... and words after it
        ("inventory", "inventory", "", "", ""),
        ("", "", "", "", ""),
        ("  Put   Red Apple IN Fridge ", "put", "red apple", "in", "fridge"),  # normalised
        ("move X to Y in Z", "move", "x", "to", "y in z"),  # the first preposition splits
    ],
)
def test_parse_by_hand(action, verb, obj, prep, target):
    a = parse_action(action)
    assert (a.verb, a.object, a.preposition, a.target) == (verb, obj, prep, target)
    assert verb_of(action) == verb


def test_keep_case_keeps_the_words_and_splits_at_lower_case_prepositions_only():
    a = parse_action("Put Red Apple in Fridge", keep_case=True)
    assert (a.verb, a.object, a.preposition, a.target) == ("Put", "Red Apple", "in", "Fridge")
    assert parse_action("Put Apple In Fridge", keep_case=True).object == "Apple In Fridge"


@pytest.mark.parametrize(
    "action, phrases",
    [
        ("put the dirty plate in dishwasher", ("dirty plate", "dishwasher")),
        ("go to the kitchen", ("kitchen",)),
        ("take the apple from the table on the floor", ("apple", "table", "floor")),
        ("look around", ("around",)),
        ("take the", ("the",)),  # an article alone is kept: nothing follows it
        ("inventory", ()),
    ],
)
def test_phrases_cut_at_every_preposition_without_leading_articles(action, phrases):
    assert parse_action(action).phrases == phrases


def test_argument_words_drop_fillers_and_match_text_words():
    assert argument_words("go to the kitchen") == ("kitchen",)
    assert argument_words("move egg giant tortoise to blue box") == (
        "egg",
        "giant",
        "tortoise",
        "blue",
        "box",
    )
    assert argument_words("examine box of cereal") == ("box", "cereal")
    assert argument_words("look at the thermometer.") == ("thermometer",)
    assert text_words("The thermometer reads 23.5!") == ["the", "thermometer", "reads", "23", "5"]
    assert FILLERS == ARTICLES | set(PREPOSITIONS) | {"of"}


def test_normalise():
    assert normalise("  Take \t the  APPLE\n") == "take the apple"


@given(
    verb=noun,
    obj=st.lists(noun, min_size=1, max_size=4),
    prep=st.sampled_from(PREPOSITIONS),
    target=st.lists(st.one_of(noun, st.sampled_from(PREPOSITIONS)), min_size=1, max_size=4),
)
def test_prepositions_split_object_and_target(verb, obj, prep, target):
    a = parse_action(" ".join([verb, *obj, prep, *target]))
    assert (a.verb, a.object, a.preposition, a.target) == (verb, " ".join(obj), prep, " ".join(target))
    assert parse_action(" ".join([verb, *obj])) == Action(verb, " ".join(obj), "", "", tuple(obj))


@given(st.lists(st.one_of(word, st.sampled_from(PREPOSITIONS)), min_size=0, max_size=8), st.booleans())
def test_parse_then_rejoin_keeps_the_words_and_the_verb_is_the_first(words, keep_case):
    action = "  ".join(words)
    a = parse_action(action, keep_case=keep_case)
    assert " ".join(filter(None, (a.verb, *a.arguments))) == " ".join(words)
    assert " ".join(filter(None, (a.object, a.preposition, a.target))) == " ".join(a.arguments)
    assert a.verb == (words[0] if words else "")
    assert all(w in a.arguments and w not in PREPOSITIONS for p in a.phrases for w in p.split())
