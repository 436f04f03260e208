// Per-episode loop breaking for a C++ robot client: the same rules as edge/loop_guard.py (keep them in step;
// tests/edge/test_cpp.py checks both on shared episodes).
//
// A greedy policy in a deterministic world repeats itself once it returns to a state it has seen. Given the
// daemon's scores, choose() returns the best-scored candidate that is not ruled out by:
//   1. loop-closing actions: an action that led back to a world state already visited this episode is not
//      taken again from the world state it was taken in;
//   2. exact repeats: an action is not taken twice in the very same observation.
// When every candidate is ruled out it falls back to rule 1 alone, then to the argmax. World states come from a
// key called with the observation and the actions the episode took before it (edge::WorldKey: the layout's
// world key, models.state_layout.StateLayout.world_key). The daemon is stateless per request; the episode's
// memory belongs to the client that runs the episode. Header-only, standard library.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace edge {

// One world part of a state layout (models/state_layout.py): the label of its "Label: value" line, and whether
// it is compared as a bag of words. A client takes them from its environment adapter or from the daemon's info
// reply (world.state_layout.parts with world=true); nothing here knows a world.
struct WorldPart {
    std::string label;
    bool unordered = false;
};

// An episode's actions so far, oldest first.
using Actions = std::vector<std::string>;

// Text as Python's str reads it, for UTF-8 strings: the white space of str.split()/str.strip()/re's \s and the
// line breaks of str.splitlines(), ASCII and not. Case is folded for ASCII letters only.
namespace text {

// The length in bytes of the white space character at s[i] (0: none there).
inline std::size_t space_at(const std::string& s, std::size_t i) {
    const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
    const unsigned c = b(0);
    if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) return 1;
    if (c == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0)) return 2;  // U+0085 U+00A0
    if (c == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;    // U+1680
    if (c == 0xE2 && b(1) == 0x80) {                            // U+2000-200A, U+2028, U+2029, U+202F
        const unsigned d = b(2);
        return (d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF ? 3 : 0;
    }
    if (c == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;  // U+205F
    if (c == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;  // U+3000
    return 0;
}

// The length in bytes of the line break at s[i] ("\r\n" is one; 0: none there).
inline std::size_t break_at(const std::string& s, std::size_t i) {
    const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
    const unsigned c = b(0);
    if (c == '\r') return b(1) == '\n' ? 2 : 1;
    if (c == '\n' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E)) return 1;
    if (c == 0xC2 && b(1) == 0x85) return 2;                                   // U+0085
    if (c == 0xE2 && b(1) == 0x80 && (b(2) == 0xA8 || b(2) == 0xA9)) return 3;  // U+2028 U+2029
    return 0;
}

// The lines of s, as str.splitlines(): no empty line after a final break, none at all for "".
inline std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0, i = 0;
    while (i < s.size()) {
        const std::size_t n = break_at(s, i);
        if (n == 0) {
            ++i;
            continue;
        }
        out.push_back(s.substr(start, i - start));
        i += n;
        start = i;
    }
    if (start < s.size()) out.push_back(s.substr(start));
    return out;
}

// The words of s, split at runs of white space (and at commas when commas_split), in order.
inline std::vector<std::string> words(const std::string& s, bool commas_split) {
    std::vector<std::string> out;
    std::string word;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = space_at(s, i);
        if (n == 0 && commas_split && s[i] == ',') n = 1;
        if (n) {
            if (!word.empty()) out.push_back(std::move(word));
            word.clear();
            i += n;
        } else {
            word += s[i++];
        }
    }
    if (!word.empty()) out.push_back(std::move(word));
    return out;
}

inline std::string join(const std::vector<std::string>& parts, const std::string& sep = " ") {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
}

// s with its white space collapsed: " ".join(s.split()).
inline std::string collapse(const std::string& s) { return join(words(s, false)); }

// s without white space at either end: s.strip().
inline std::string strip(const std::string& s) {
    std::size_t begin = 0, end = 0;  // end: just after the last character that is not white space
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = space_at(s, i);
        if (n == 0) {
            if (end == 0) begin = i;
            end = i + 1;
            ++i;
        } else {
            i += n;
        }
    }
    return end == 0 ? std::string() : s.substr(begin, end - begin);
}

inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return s;
}

// A line's sentences: cut after '.', '!' or '?' followed by white space, each collapsed, empty ones dropped
// (models.state_layout.sentences).
inline std::vector<std::string> sentences(const std::string& line) {
    std::vector<std::string> out;
    const auto keep = [&](const std::string& piece) {
        std::string c = collapse(piece);
        if (!c.empty()) out.push_back(std::move(c));
    };
    std::size_t start = 0;
    for (std::size_t i = 1; i < line.size();) {
        const char before = line[i - 1];
        std::size_t n = space_at(line, i);
        if (n == 0 || (before != '.' && before != '!' && before != '?')) {
            i += n ? n : 1;
            continue;
        }
        keep(line.substr(start, i - start));
        for (i += n; i < line.size() && (n = space_at(line, i)) != 0;) i += n;
        start = i;
    }
    keep(line.substr(start));
    return out;
}

// The text's pieces: its lines cut into sentences (models.state_layout.text_pieces).
inline std::vector<std::string> pieces(const std::string& s) {
    std::vector<std::string> out;
    for (const std::string& line : lines(s))
        for (std::string& p : sentences(line)) out.push_back(std::move(p));
    return out;
}

// "Label: value" (or "Label:" alone) after trimming the line: the label and the trimmed value; false for any
// other line (models.state_layout.labelled_line).
inline bool labelled(const std::string& line, std::string& label, std::string& value) {
    const std::string t = strip(line);
    const std::size_t colon = t.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    if (colon + 1 < t.size() && t[colon + 1] != ' ' && t[colon + 1] != '\t') return false;
    label = t.substr(0, colon);
    value = strip(t.substr(colon + 1));
    return true;
}

}  // namespace text

// The words of text (white space separated; commas too when commas_split), in order.
inline std::vector<std::string> split_words(const std::string& text, bool commas_split) {
    return text::words(text, commas_split);
}

inline std::string join_words(const std::vector<std::string>& words) { return text::join(words); }

// An unordered part's value as a bag: lower-case words, commas and the articles a/an/some/the dropped, sorted.
inline std::string bag_of_words(const std::string& value) {
    std::vector<std::string> bag;
    for (std::string& w : split_words(text::lower(value), true)) {
        if (w != "a" && w != "an" && w != "some" && w != "the") bag.push_back(std::move(w));
    }
    std::sort(bag.begin(), bag.end());
    return join_words(bag);
}

// Whether a piece of plain text is a comma list of known actions (or "none"): an echo of the agent's own
// actions. known holds the actions lower-cased, white space collapsed (models.state_layout._lists_only).
inline bool lists_only(const std::string& piece, const std::set<std::string>& known) {
    if (known.empty()) return false;
    std::string body = piece;
    while (!body.empty() && body.back() == '.') body.pop_back();
    bool any = false;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = body.find(',', start);
        const std::string entry = text::collapse(text::lower(body.substr(start, comma - start)));
        if (!entry.empty()) {
            if (entry != "none" && !known.count(entry)) return false;
            any = true;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return any;
}

// The world state of a state text, given the episode's actions so far: its world lines in order (unordered
// parts as bags of words, other parts with white space collapsed); else, a plain text, the whole text with
// white space collapsed, without the pieces (lines, sentences) that only list the actions or "none" (an echo
// of the recent actions) when there are actions. As models.state_layout.StateLayout.world_key, byte for byte
// on UTF-8 text whose upper-case letters are ASCII (tests/edge/test_cpp.py replays both). No parts: the plain
// layout.
class WorldKey {
  public:
    explicit WorldKey(std::vector<WorldPart> parts = {}) : parts_(std::move(parts)) {}

    std::string operator()(const std::string& observation, const Actions& actions = {}) const {
        std::vector<std::string> kept;
        std::string label, value;
        for (const std::string& line : text::lines(observation)) {
            if (!text::labelled(line, label, value)) continue;
            for (const WorldPart& p : parts_) {
                if (p.label != label) continue;
                kept.push_back(label + ": " + (p.unordered ? bag_of_words(value) : text::collapse(value)));
                break;
            }
        }
        if (!kept.empty()) return text::join(kept, "\n");
        if (actions.empty()) return text::collapse(observation);
        std::set<std::string> known;
        for (const std::string& a : actions) known.insert(text::collapse(text::lower(a)));
        std::vector<std::string> world;
        for (std::string& piece : text::pieces(observation))
            if (!lists_only(piece, known)) world.push_back(std::move(piece));
        return text::join(world);
    }

  private:
    std::vector<WorldPart> parts_;
};

class LoopGuard {
  public:
    // key(observation, actions) maps an observation to its world state, given the actions this episode took
    // before it (chosen or recorded here, oldest first): e.g. an edge::WorldKey. By default the whole
    // observation.
    using Key = std::function<std::string(const std::string&, const Actions&)>;

    explicit LoopGuard(Key key = nullptr) : key_(std::move(key)) {}

    void reset() {
        actions_.clear();
        taken_.clear();
        closing_.clear();
        visited_.clear();
        has_last_ = false;
        overrides_ = 0;
    }

    // The index of the candidate to take; scores[i] is candidate i's score from the daemon.
    template <class Score>
    std::size_t choose(const std::string& observation, const std::vector<std::string>& candidates,
                       const std::vector<Score>& scores) {
        if (candidates.empty() || candidates.size() != scores.size())
            throw std::invalid_argument(std::to_string(candidates.size()) + " candidates but " +
                                        std::to_string(scores.size()) + " scores");
        const std::string world = enter(observation);
        std::vector<std::size_t> order(candidates.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
        std::size_t pick = order[0];
        bool found_allowed = false;
        for (std::size_t i : order) {
            if (closing_.count({world, candidates[i]})) continue;
            if (!found_allowed) {
                pick = i;  // best allowed by rule 1 (the fallback when every one was taken here before)
                found_allowed = true;
            }
            if (!taken_.count({observation, candidates[i]})) {
                pick = i;
                break;
            }
        }
        if (pick != order[0]) ++overrides_;
        taken_.insert({observation, candidates[pick]});
        last_ = {world, candidates[pick]};
        has_last_ = true;
        actions_.push_back(candidates[pick]);
        return pick;
    }

    // Remember an action something other than choose() picked in this observation (e.g. a task strategy), so
    // the episode's memory stays whole.
    void record(const std::string& observation, const std::string& action) {
        const std::string world = enter(observation);
        taken_.insert({observation, action});
        last_ = {world, action};
        has_last_ = true;
        actions_.push_back(action);
    }

    // How many times this episode the guard chose something other than the argmax.
    int overrides() const { return overrides_; }

    // The actions this episode took so far (chosen or recorded), oldest first: what the key is given.
    const Actions& actions() const { return actions_; }

  private:
    using Pair = std::pair<std::string, std::string>;

    // The observation's world state (keyed with the actions taken before it), after noting whether the last
    // action led back to a visited one.
    std::string enter(const std::string& observation) {
        std::string world = key_ ? key_(observation, actions_) : observation;
        if (has_last_ && visited_.count(world)) closing_.insert(last_);  // the last action closed a loop
        visited_.insert(world);
        return world;
    }

    Key key_;
    Actions actions_;
    std::set<Pair> taken_;
    std::set<Pair> closing_;
    std::set<std::string> visited_;
    Pair last_;
    bool has_last_ = false;
    int overrides_ = 0;
};

}  // namespace edge
