// Per-episode loop breaking for a C++ robot client: the same rules as edge/loop_guard.py (keep them in step;
// tests/test_edge_cpp.py checks both on shared episodes).
//
// A greedy policy in a deterministic world repeats itself once it returns to a state it has seen. Given the
// daemon's scores, choose() returns the best-scored candidate that is not ruled out by:
//   1. loop-closing actions: an action that led back to a world state already visited this episode is not
//      taken again from the world state it was taken in;
//   2. exact repeats: an action is not taken twice in the very same observation.
// When every candidate is ruled out it falls back to rule 1 alone, then to the argmax. The daemon is stateless
// per request; the episode's memory belongs to the client that runs the episode. Header-only, standard library.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>
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

// The words of text (white space separated; commas too when commas_split), in order.
inline std::vector<std::string> split_words(std::string text, bool commas_split) {
    if (commas_split) std::replace(text.begin(), text.end(), ',', ' ');
    std::istringstream in(text);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

inline std::string join_words(const std::vector<std::string>& words) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) out += (i ? " " : "") + words[i];
    return out;
}

// An unordered part's value as a bag: lower-case words, commas and the articles a/an/some/the dropped, sorted.
inline std::string bag_of_words(std::string value) {
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::vector<std::string> bag;
    for (std::string& w : split_words(value, true)) {
        if (w != "a" && w != "an" && w != "some" && w != "the") bag.push_back(std::move(w));
    }
    std::sort(bag.begin(), bag.end());
    return join_words(bag);
}

// The world state of a state text: its world lines in order (unordered parts as bags of words, other parts with
// white space collapsed), else the whole text with white space collapsed. As
// models.state_layout.StateLayout.world_key (the one definition; tests/test_edge_cpp.py replays both).
class WorldKey {
  public:
    explicit WorldKey(std::vector<WorldPart> parts) : parts_(std::move(parts)) {}

    std::string operator()(const std::string& observation) const {
        std::vector<std::string> kept;
        std::size_t start = 0;
        while (start <= observation.size()) {
            std::size_t end = observation.find_first_of("\r\n", start);
            if (end == std::string::npos) end = observation.size();
            const std::string line = observation.substr(start, end - start);
            for (const WorldPart& p : parts_) {
                const std::string head = p.label + ":";
                if (line.rfind(head, 0) != 0) continue;
                const std::string value = line.substr(head.size());
                kept.push_back(head + " " + (p.unordered ? bag_of_words(value) : join_words(split_words(value, false))));
                break;
            }
            if (end == observation.size()) break;
            start = end + ((observation[end] == '\r' && end + 1 < observation.size() && observation[end + 1] == '\n') ? 2 : 1);
        }
        if (kept.empty()) return join_words(split_words(observation, false));
        std::string out = kept[0];
        for (std::size_t i = 1; i < kept.size(); ++i) out += "\n" + kept[i];
        return out;
    }

  private:
    std::vector<WorldPart> parts_;
};

class LoopGuard {
  public:
    using Key = std::function<std::string(const std::string&)>;

    // key maps an observation to its world state (e.g. an edge::WorldKey); by default the whole observation.
    explicit LoopGuard(Key key = nullptr) : key_(std::move(key)) {}

    void reset() {
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
        return pick;
    }

    // Remember an action something other than choose() picked in this observation (e.g. a task strategy), so
    // the episode's memory stays whole.
    void record(const std::string& observation, const std::string& action) {
        const std::string world = enter(observation);
        taken_.insert({observation, action});
        last_ = {world, action};
        has_last_ = true;
    }

    // How many times this episode the guard chose something other than the argmax.
    int overrides() const { return overrides_; }

  private:
    using Pair = std::pair<std::string, std::string>;

    // The observation's world state, after noting whether the last action led back to a visited one.
    std::string enter(const std::string& observation) {
        std::string world = key_ ? key_(observation) : observation;
        if (has_last_ && visited_.count(world)) closing_.insert(last_);  // the last action closed a loop
        visited_.insert(world);
        return world;
    }

    Key key_;
    std::set<Pair> taken_;
    std::set<Pair> closing_;
    std::set<std::string> visited_;
    Pair last_;
    bool has_last_ = false;
    int overrides_ = 0;
};

}  // namespace edge
