// Checks edge::LoopGuard and edge::world_key against episodes recorded from the Python guard
// (tests/test_edge_cpp.py writes them). Usage: edge_loop_guard_test EPISODES_FILE
// Lines: "key OBS_HEX EXPECTED_HEX" | "reset" | "step OBS_HEX PICK K CAND_HEX... SCORE..."
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
    edge::LoopGuard guard(edge::world_key);
    int failures = 0, steps = 0, keys = 0, line_no = 0;
    for (std::string line; std::getline(f, line);) {
        ++line_no;
        std::istringstream ss(line);
        std::string kind;
        ss >> kind;
        if (kind == "reset") {
            guard.reset();
        } else if (kind == "key") {
            std::string obs, want;
            ss >> obs >> want;
            ++keys;
            if (edge::world_key(unhex(obs)) != unhex(want)) {
                std::cerr << "FAIL line " << line_no << ": world_key differs\n";
                ++failures;
            }
        } else if (kind == "step") {
            const edge_test::Step st = edge_test::read_step(ss);
            ++steps;
            size_t got = guard.choose(st.observation, st.candidates, st.scores);
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
