// Per-episode placement search for put-away tasks, for a C++ robot client: the same rules as
// edge/placement_search.py (keep them in step; tests/test_edge_cpp.py replays episodes recorded from Python).
//
// The decision that matters in a put-away task is where each object goes, and a wrong place only shows as an
// episode that does not end. When an object is first held, the policy (the daemon's act, through `score`)
// scores one hypothetical "put OBJECT in PLACE" per place, closed containers included (an admissible
// "open PLACE"); a softmax gives the object's place distribution. The search follows the best joint assignment
// (sum of log-probabilities) not yet ruled out: take loose objects, open a closed target, put each object in
// its place. When every object is placed, nothing is held and the episode goes on, that assignment is ruled
// out and the objects whose place differs in the next best one are moved. Where it has no opinion it defers to
// the edge::LoopGuard it wraps (which also records every step the search takes). Header-only, standard library.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "edge/loop_guard.hpp"

namespace edge {

// (object, target) of a "verb object [preposition target]" command; "" where absent. As edge.actions.split_action.
inline std::pair<std::string, std::string> split_action(const std::string& action) {
    static const std::set<std::string> prepositions = {"in", "into", "on", "onto", "from", "with", "to", "at", "under"};
    std::istringstream in(action);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.size() < 2) return {"", ""};
    auto join = [&](std::size_t from, std::size_t to) {
        std::string out;
        for (std::size_t i = from; i < to; ++i) out += (i > from ? " " : "") + words[i];
        return out;
    };
    // words[0] is the verb; the object runs to the first preposition that has words after it
    for (std::size_t i = 2; i + 1 < words.size(); ++i)
        if (prepositions.count(words[i])) return {join(1, i), join(i + 1, words.size())};
    return {join(1, words.size()), ""};
}

inline std::vector<double> log_softmax(const std::vector<double>& scores) {
    double m = scores[0];
    for (double s : scores) m = s > m ? s : m;
    double total = 0;
    for (double s : scores) total += std::exp(s - m);
    const double z = m + std::log(total);
    std::vector<double> out;
    for (double s : scores) out.push_back(s - z);
    return out;
}

using Ranked = std::vector<std::pair<std::string, double>>;              // (place, log-probability), best first
using Assignment = std::map<std::string, std::string>;                   // object -> place
using RankedObjects = std::vector<std::pair<std::string, Ranked>>;       // in the order objects were ranked

// The highest-scoring joint assignment not in `tried` (ties: the earlier places), or nothing when all are.
inline std::optional<Assignment> best_untried(const RankedObjects& ranked, const std::set<Assignment>& tried) {
    std::vector<const std::pair<std::string, Ranked>*> objects;
    for (const auto& r : ranked)
        if (!r.second.empty()) objects.push_back(&r);
    if (objects.empty()) return std::nullopt;
    auto total = [&](const std::vector<std::size_t>& idx) {
        double t = 0;
        for (std::size_t k = 0; k < objects.size(); ++k) t += objects[k]->second[idx[k]].second;
        return t;
    };
    std::vector<std::size_t> start(objects.size(), 0);
    std::set<std::pair<double, std::vector<std::size_t>>> heap{{-total(start), start}};
    std::set<std::vector<std::size_t>> seen{start};
    while (!heap.empty()) {
        const std::vector<std::size_t> idx = heap.begin()->second;
        heap.erase(heap.begin());
        Assignment a;
        for (std::size_t k = 0; k < objects.size(); ++k) a[objects[k]->first] = objects[k]->second[idx[k]].first;
        if (!tried.count(a)) return a;
        for (std::size_t k = 0; k < objects.size(); ++k) {
            if (idx[k] + 1 >= objects[k]->second.size()) continue;
            std::vector<std::size_t> next = idx;
            ++next[k];
            if (seen.insert(next).second) heap.insert({-total(next), next});
        }
    }
    return std::nullopt;
}

class PlacementSearch {
  public:
    // score(instruction, observation, candidates) -> one score per candidate, for any candidate texts.
    using Scorer = std::function<std::vector<double>(const std::string&, const std::string&,
                                                     const std::vector<std::string>&)>;

    explicit PlacementSearch(Scorer score, LoopGuard::Key key = nullptr, std::string take = "take",
                             std::string put = "put", std::string open = "open")
        : score_(std::move(score)), guard_(std::move(key)), take_(std::move(take)), put_(std::move(put)),
          open_(std::move(open)) {}

    void reset() {
        guard_.reset();
        objects_.clear();
        ranked_.clear();
        where_.clear();
        tried_.clear();
        plan_.reset();
        has_last_ = started_ = false;
    }

    // The index of the candidate to take; scores[i] is admissible candidate i's score (for the guard).
    template <class Score>
    std::size_t choose(const std::string& instruction, const std::string& observation,
                       const std::vector<std::string>& candidates, const std::vector<Score>& scores) {
        if (candidates.empty() || candidates.size() != scores.size())
            throw std::invalid_argument(std::to_string(candidates.size()) + " candidates but " +
                                        std::to_string(scores.size()) + " scores");
        Parsed p = parse(candidates);
        observe(p);
        for (const auto& [obj, open_places] : p.puts.items) {
            if (!contains(objects_, obj)) objects_.push_back(obj);
            if (find_ranked(obj) == nullptr) {
                std::vector<std::string> places;
                for (const auto& [place, idx] : open_places.items) places.push_back(place);
                for (const auto& [place, idx] : p.opens.items)
                    if (!contains(places, place)) places.push_back(place);
                rank(instruction, observation, candidates, obj, places);
                plan_.reset();  // a new object: the best joint assignment changes
            }
        }
        std::optional<std::size_t> pick = decide(p);
        if (!pick) {
            pick = guard_.choose(observation, candidates, scores);
        } else {
            guard_.record(observation, candidates[*pick]);
        }
        const std::string& c = candidates[*pick];
        auto [obj, target] = split_action(c);
        last_ = {c.substr(0, c.find(' ')), obj, target};
        has_last_ = true;
        return *pick;
    }

    // Joint assignments ruled out over every episode (reset keeps it).
    int searches() const { return searches_; }

  private:
    template <class V>
    struct Ordered {  // a small insertion-ordered map, as a Python dict
        std::vector<std::pair<std::string, V>> items;
        V* get(const std::string& k) {
            for (auto& kv : items)
                if (kv.first == k) return &kv.second;
            return nullptr;
        }
        bool has(const std::string& k) const {
            for (const auto& kv : items)
                if (kv.first == k) return true;
            return false;
        }
        void set(const std::string& k, V v) {
            if (V* old = get(k)) *old = std::move(v);
            else items.emplace_back(k, std::move(v));
        }
    };
    struct Parsed {
        Ordered<std::size_t> takes, opens;
        Ordered<Ordered<std::size_t>> puts;
    };

    static bool contains(const std::vector<std::string>& v, const std::string& s) {
        for (const auto& x : v)
            if (x == s) return true;
        return false;
    }

    Ranked* find_ranked(const std::string& obj) {
        for (auto& r : ranked_)
            if (r.first == obj) return &r.second;
        return nullptr;
    }

    std::string where(const std::string& obj) const {  // "" while held or loose
        auto it = where_.find(obj);
        return it == where_.end() ? "" : it->second;
    }

    Parsed parse(const std::vector<std::string>& candidates) const {
        Parsed p;
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            const std::string& c = candidates[i];
            const std::string verb = c.substr(0, c.find(' '));
            auto [obj, target] = split_action(c);
            if (obj.empty()) continue;
            if (verb == take_ && target.empty()) {
                p.takes.set(obj, i);
            } else if (verb == put_ && !target.empty()) {
                Ordered<std::size_t>* places = p.puts.get(obj);
                if (places == nullptr) {
                    p.puts.set(obj, {});
                    places = p.puts.get(obj);
                }
                places->set(target, i);
            } else if (verb == open_ && target.empty()) {
                p.opens.set(obj, i);
            }
        }
        return p;
    }

    std::string put_text(const std::vector<std::string>& candidates, const std::string& obj,
                         const std::string& place) const {
        for (const auto& c : candidates) {
            auto [o, t] = split_action(c);
            if (o == obj && !t.empty() && c.rfind(put_ + " ", 0) == 0 && c.size() >= t.size() &&
                c.compare(c.size() - t.size(), t.size(), t) == 0)
                return c.substr(0, c.size() - t.size()) + place;
        }
        return put_ + " " + obj + " in " + place;
    }

    void rank(const std::string& instruction, const std::string& observation,
              const std::vector<std::string>& candidates, const std::string& obj,
              const std::vector<std::string>& places) {
        std::vector<std::string> texts;
        for (const auto& place : places) texts.push_back(put_text(candidates, obj, place));
        const std::vector<double> logp = log_softmax(score_(instruction, observation, texts));
        Ranked r;
        for (std::size_t i = 0; i < places.size(); ++i) r.emplace_back(places[i], logp[i]);
        std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        ranked_.emplace_back(obj, std::move(r));
    }

    void observe(const Parsed& p) {
        if (!started_) {
            started_ = true;
            objects_.clear();
            for (const auto& kv : p.takes.items) objects_.push_back(kv.first);
        }
        if (!has_last_) return;
        const auto& [verb, obj, target] = last_;
        const bool held = p.puts.has(obj);
        if (verb == put_ && !held) {
            where_[obj] = target;  // the put happened: the object is no longer held
        } else if (verb == put_) {
            if (Ranked* r = find_ranked(obj)) {  // still held: this place does not take the object
                Ranked kept;
                for (const auto& ps : *r)
                    if (ps.first != target) kept.push_back(ps);
                *r = kept;
                plan_.reset();
            }
        }
        for (const auto& kv : p.puts.items) where_[kv.first] = "";
    }

    std::optional<std::size_t> decide(Parsed& p) {
        if (objects_.empty()) return std::nullopt;
        bool settled = p.puts.items.empty();
        for (const auto& o : objects_) settled = settled && !where(o).empty();
        if (settled && plan_) {
            bool as_planned = true;
            for (const auto& [o, place] : *plan_) as_planned = as_planned && where(o) == place;
            if (as_planned) {  // everything is where the plan says and the episode goes on: it is wrong
                tried_.insert(*plan_);
                ++searches_;
                plan_.reset();
            }
        }
        if (!plan_ && !ranked_.empty()) {
            plan_ = best_untried(ranked_, tried_);
            if (!plan_) return std::nullopt;
        }
        const Assignment plan = plan_ ? *plan_ : Assignment{};
        auto planned = [&](const std::string& o) {
            auto it = plan.find(o);
            return it == plan.end() ? std::string() : it->second;
        };
        for (auto& [obj, open_places] : p.puts.items) {  // held: put it where the plan says, opening it first
            const std::string place = planned(obj);
            if (place.empty()) continue;
            if (std::size_t* i = open_places.get(place)) return *i;
            if (std::size_t* i = p.opens.get(place)) return *i;
        }
        for (const auto& obj : objects_) {  // not held: take what is loose or in the wrong place
            if (p.puts.get(obj) != nullptr) continue;
            const std::string at = where(obj), place = planned(obj);
            if (at.empty() || (!place.empty() && at != place)) {
                if (std::size_t* i = p.takes.get(obj)) return *i;
                if (std::size_t* i = p.opens.get(at)) return *i;
            }
        }
        return std::nullopt;
    }

    Scorer score_;
    LoopGuard guard_;
    std::string take_, put_, open_;
    std::vector<std::string> objects_;
    RankedObjects ranked_;
    std::map<std::string, std::string> where_;
    std::set<Assignment> tried_;
    std::optional<Assignment> plan_;
    std::tuple<std::string, std::string, std::string> last_;
    bool has_last_ = false, started_ = false;
    int searches_ = 0;
};

}  // namespace edge
