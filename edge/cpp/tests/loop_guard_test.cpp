// Checks edge::LoopGuard and edge::WorldKey against episodes recorded from the Python guard
// (tests/test_edge_cpp.py writes them). Usage: edge_loop_guard_test EPISODES_FILE
// Lines: "part LABEL_HEX UNORDERED" (the layout's world parts, first) | "key OBS_HEX EXPECTED_HEX" | "reset" |
// "step OBS_HEX PICK K CAND_HEX... SCORE..."
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
    std::vector<std::string> lines;
    std::vector<edge::WorldPart> parts;
    for (std::string line; std::getline(f, line);) {
        std::istringstream ss(line);
        std::string kind, label;
        int unordered = 0;
        if ((ss >> kind) && kind == "part" && (ss >> label >> unordered)) parts.push_back({unhex(label), unordered != 0});
        lines.push_back(line);
    }
    const edge::WorldKey world_key(parts);
    edge::LoopGuard guard(world_key);
    int failures = 0, steps = 0, keys = 0, line_no = 0;
    for (const std::string& line : lines) {
        ++line_no;
        std::istringstream ss(line);
        std::string kind;
        ss >> kind;
        if (kind == "part") {
            continue;
        } else if (kind == "reset") {
            guard.reset();
        } else if (kind == "key") {
            std::string obs, want;
            ss >> obs >> want;
            ++keys;
            if (world_key(unhex(obs)) != unhex(want)) {
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
