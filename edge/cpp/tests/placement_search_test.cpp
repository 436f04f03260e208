// Checks edge::PlacementSearch and edge::split_action against episodes recorded from the Python search
// (tests/test_edge_cpp.py writes them). Usage: edge_placement_search_test EPISODES_FILE
// Lines: "split ACTION_HEX OBJECT_HEX TARGET_HEX" | "reset" | "pref OBJECT_HEX PLACE_HEX SCORE"
//        | "step OBS_HEX PICK K CAND_HEX... SCORE..." | "searches N"
// The scorer is the episode's pref table: a "put OBJECT in PLACE" candidate scores pref[OBJECT][PLACE] (0 when
// absent), anything else 0, as the Python side's table_scorer.
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "edge/placement_search.hpp"
#include "vectors.hpp"

using edge_test::unhex;

int main(int argc, char** argv) {
    std::ifstream f;
    if (!edge_test::open_vectors(argc, argv, "edge_placement_search_test EPISODES_FILE", f)) return 2;
    std::map<std::pair<std::string, std::string>, double> prefs;
    auto scorer = [&](const std::string&, const std::string&, const std::vector<std::string>& cands) {
        std::vector<double> out;
        for (const auto& c : cands) {
            auto it = prefs.find(edge::split_action(c));
            out.push_back(c.rfind("put ", 0) == 0 && it != prefs.end() ? it->second : 0.0);
        }
        return out;
    };
    edge::PlacementSearch search(scorer);
    int failures = 0, steps = 0, splits = 0, line_no = 0;
    for (std::string line; std::getline(f, line);) {
        ++line_no;
        std::istringstream ss(line);
        std::string kind;
        ss >> kind;
        if (kind == "reset") {
            search.reset();
            prefs.clear();
        } else if (kind == "split") {
            std::string action, obj, target;
            ss >> action >> obj >> target;
            ++splits;
            if (edge::split_action(unhex(action)) != std::make_pair(unhex(obj), unhex(target))) {
                std::cerr << "FAIL line " << line_no << ": split_action(" << unhex(action) << ") differs\n";
                ++failures;
            }
        } else if (kind == "pref") {
            std::string obj, place;
            double score = 0;
            ss >> obj >> place >> score;
            prefs[{unhex(obj), unhex(place)}] = score;
        } else if (kind == "step") {
            const edge_test::Step st = edge_test::read_step(ss);
            ++steps;
            size_t got = search.choose("tidy up", st.observation, st.candidates, st.scores);
            if (got != st.pick) {
                std::cerr << "FAIL line " << line_no << ": picked " << got << ", Python picked " << st.pick << "\n";
                ++failures;
            }
        } else if (kind == "searches") {
            int want = 0;
            ss >> want;
            if (search.searches() != want) {
                std::cerr << "FAIL: " << search.searches() << " searches, Python " << want << "\n";
                ++failures;
            }
        } else if (!kind.empty()) {
            std::cerr << "bad line " << line_no << ": " << kind << "\n";
            return 2;
        }
    }
    std::cout << "{\"steps\": " << steps << ", \"splits\": " << splits << ", \"searches\": " << search.searches()
              << ", \"failures\": " << failures << "}\n";
    return failures == 0 ? 0 : 1;
}
