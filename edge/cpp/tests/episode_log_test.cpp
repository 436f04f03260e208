// Writes episodes recorded by tests/edge/test_cpp.py through edge::EpisodeLog, for comparison with the Python
// writer's file. Usage: edge_episode_log_test SCRIPT_FILE
// Texts are hex (UTF-8 bytes; "-" is the empty text). Lines, in order:
//   "open PATH_HEX TASK_TYPE_HEX META_JSON_HEX"           a log (no fsync: a test)
//   "episode ID_HEX INSTRUCTION_HEX"                     a new episode
//   "step STATE_HEX ACTION_HEX NEXT_HEX REWARD K CAND_HEX..."
//   "end SUCCESS"                                        0 or 1
//   "bad STATE_HEX"                                      a step whose state must be refused (not UTF-8)
// Prints {"episodes": N, "refused": M}.
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "edge/episode_log.hpp"
#include "vectors.hpp"

namespace {
std::string text(const std::string& h) { return h == "-" ? std::string() : edge_test::unhex(h); }
}  // namespace

int main(int argc, char** argv) {
    std::ifstream f;
    if (!edge_test::open_vectors(argc, argv, "edge_episode_log_test SCRIPT_FILE", f)) return 2;
    std::unique_ptr<edge::EpisodeLog> log;
    std::optional<edge::EpisodeLog::Episode> ep;
    int refused = 0;
    for (std::string line; std::getline(f, line);) {
        std::istringstream ss(line);
        std::string kind;
        ss >> kind;
        if (kind == "open") {
            std::string path, task, meta;
            ss >> path >> task >> meta;
            log = std::make_unique<edge::EpisodeLog>(text(path), text(task), text(meta), false);
        } else if (kind == "episode") {
            std::string id, instruction;
            ss >> id >> instruction;
            ep.emplace(log->episode(text(instruction), text(id)));
        } else if (kind == "step") {
            std::string state, action, next;
            double reward = 0;
            std::size_t k = 0;
            ss >> state >> action >> next >> reward >> k;
            std::vector<std::string> candidates(k);
            for (auto& c : candidates) {
                std::string h;
                ss >> h;
                c = text(h);
            }
            ep->step(text(state), candidates, text(action), text(next), reward);
        } else if (kind == "bad") {
            std::string state;
            ss >> state;
            try {
                ep->step(text(state), {"a"}, "a", "n");
            } catch (const std::invalid_argument&) {
                ++refused;
            }
        } else if (kind == "end") {
            int success = 0;
            ss >> success;
            ep->end(success != 0);
        }
    }
    std::cout << "{\"episodes\": " << (log ? log->written() : 0) << ", \"refused\": " << refused << "}\n";
    return 0;
}
