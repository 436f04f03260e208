// Checks edge::LoopGuard and edge::WorldKey against episodes recorded from the Python guard
// (tests/edge/test_cpp.py writes them). Usage: edge_loop_guard_test EPISODES_FILE
// Texts are hex (UTF-8 bytes; "-" is the empty text). Lines, in order:
//   "layout"                                   a new state layout with no world parts (the plain one); resets
//   "part LABEL_HEX UNORDERED"                 adds a world part to the layout
//   "key OBS_HEX EXPECTED_HEX ACTION_HEX..."   the world key of OBS given the episode's actions
//   "reset"                                    a new episode
//   "step OBS_HEX PICK K CAND_HEX... SCORE... KEY_HEX"   the guard's pick and the world key it used
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "edge/loop_guard.hpp"
#include "vectors.hpp"

using edge_test::unhex;

int main(int argc, char** argv) {
    std::ifstream f;
    if (!edge_test::open_vectors(argc, argv, "edge_loop_guard_test EPISODES_FILE", f)) return 2;
    std::vector<edge::WorldPart> parts;
    edge::WorldKey world_key;
    std::string last_key;  // the key the guard used for its last observation
    edge::LoopGuard guard([&](const std::string& observation, const edge::Actions& actions) {
        last_key = world_key(observation, actions);
        return last_key;
    });
    int failures = 0, steps = 0, keys = 0, line_no = 0;
    for (std::string line; std::getline(f, line);) {
        ++line_no;
        std::istringstream ss(line);
        std::string kind;
        ss >> kind;
        if (kind == "layout" || kind == "part") {
            if (kind == "layout") parts.clear();
            std::string label;
            int unordered = 0;
            if (kind == "part" && !(ss >> label >> unordered)) {
                std::cerr << "bad part line " << line_no << "\n";
                return 2;
            }
            if (kind == "part") parts.push_back({unhex(label), unordered != 0});
            world_key = edge::WorldKey(parts);
            guard.reset();
        } else if (kind == "reset") {
            guard.reset();
        } else if (kind == "key") {
            std::string obs, want;
            ss >> obs >> want;
            edge::Actions actions;
            for (std::string a; ss >> a;) actions.push_back(unhex(a));
            ++keys;
            if (world_key(unhex(obs), actions) != unhex(want)) {
                std::cerr << "FAIL line " << line_no << ": world_key differs: \"" << world_key(unhex(obs), actions)
                          << "\" vs \"" << unhex(want) << "\"\n";
                ++failures;
            }
        } else if (kind == "step") {
            const edge_test::Step st = edge_test::read_step(ss);
            std::string want;
            ss >> want;
            ++steps;
            size_t got = guard.choose(st.observation, st.candidates, st.scores);
            if (last_key != unhex(want)) {
                std::cerr << "FAIL line " << line_no << ": the guard's world key differs\n";
                ++failures;
            }
            if (got != st.pick) {
                std::cerr << "FAIL line " << line_no << ": picked " << got << ", Python picked " << st.pick << "\n";
                ++failures;
            }
        } else if (!kind.empty()) {
            std::cerr << "bad line " << line_no << ": " << kind << "\n";
            return 2;
        }
    }
    std::cout << "{\"steps\": " << steps << ", \"keys\": " << keys << ", \"failures\": " << failures << "}\n";
    return failures == 0 ? 0 : 1;
}
