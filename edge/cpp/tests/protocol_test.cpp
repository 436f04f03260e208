// Checks the C++ encoder against the shared byte vectors (edge/protocol_vectors/vectors.txt) and decodes the
// reply vectors. Usage: edge_protocol_test VECTORS_FILE. Keep in step with edge/protocol_vectors/__init__.py.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "edge/client.hpp"
#include "vectors.hpp"

namespace {
int failures = 0;

void check(bool cond, const std::string& what) {
    if (!cond) {
        std::cerr << "FAIL: " << what << "\n";
        ++failures;
    }
}

using Vectors = std::map<std::string, std::string>;

// A vector the file lacks ends the test with its name (the file is stale, or the names disagree).
const std::string& at(const Vectors& vec, const std::string& name) {
    auto it = vec.find(name);
    if (it == vec.end()) throw std::runtime_error(name + ": missing from the vectors file");
    return it->second;
}

// Encodes the requests, decodes the replies; 0 when all match.
int run(const Vectors& vec) {
    using edge::Id;
    const std::vector<std::string> cands = {"take apple", "look around"};
    const std::vector<std::string> memory_cands = {"take apple", "close fridge"};
    const std::string open_fridge = "Room: kitchen. The fridge is open.";
    const edge::Memory memory = {{"look around", "Room: kitchen."}, {"open fridge", open_fridge}};
    std::map<std::string, std::string> mine = {
        {"req_health", edge::encode_simple("health", Id{})},
        {"req_info_id7", edge::encode_simple("info", Id{int64_t{7}})},
        {"req_act_text", edge::encode_act_text(Id{int64_t{42}}, "put the apple in the fridge", "Room: kitchen", &cands)},
        {"req_act_skills", edge::encode_act_text(Id{std::string("robot-1")}, "go north", "Room: hall", nullptr)},
        {"req_act_memory", edge::encode_act_text(Id{int64_t{11}}, "put the apple in the fridge", open_fridge,
                                                 &memory_cands, memory)},
        {"req_act_memory_skills", edge::encode_act_text(Id{std::string("robot-1")}, "go north", "Room: hall", nullptr,
                                                        edge::Memory{{"go east", "Room: hall"}})},
        {"req_act_emb", edge::encode_act_embeddings(Id{int64_t{3}}, {1.0f, 0.0f, 0.5f, -1.0f}, {0.0f, 1.0f, 0.0f, 0.0f},
                                                    {1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.25f, 0.0f, 0.0f}, 2, nullptr)},
        {"req_reload", edge::encode_reload(Id{int64_t{9}}, std::string("/opt/bundle"))},
    };
    for (const auto& [name, bytes] : mine) {
        auto it = vec.find(name);
        check(it != vec.end(), name + ": missing from the vectors file");
        if (it != vec.end())
            check(it->second == bytes, name + ": C++ bytes " + edge::hex(bytes) + " != vector " + edge::hex(it->second));
    }
    edge::Reply act = edge::decode_reply(at(vec, "rep_act"));
    check(act.ok && std::get<int64_t>(act.id) == 42 && act.index == 1, "rep_act: ok/id/index");
    check(act.action && *act.action == "look around", "rep_act: action");
    check(act.scores.size() == 2 && act.scores[0] == 0.5 && act.scores[1] == 1.25, "rep_act: scores");
    std::string model;
    for (int i = 0; i < 32; ++i) model += "ab";
    check(act.model == model, "rep_act: model");
    check(act.server_ms == 0.25 && act.infer_ms == 0.125 && act.batch == 1, "rep_act: timing");
    // An empty memory is omitted: the bytes of a request without one.
    check(edge::encode_act_text(Id{int64_t{42}}, "put the apple in the fridge", "Room: kitchen", &cands,
                                edge::Memory{}) == at(vec, "req_act_text"),
          "req_act_text: an empty memory must be omitted");
    // EpisodeMemory: the episode recorded step by step sends the same bytes; the cap keeps the latest steps.
    edge::EpisodeMemory episode(8);
    episode.record("stale", "from an earlier episode");
    episode.reset();
    check(episode.empty() && episode.steps() == 0, "EpisodeMemory: reset");
    episode.record("look around", "Room: kitchen.");
    episode.record("open fridge", open_fridge);
    check(episode.memory() == memory && episode.steps() == 2, "EpisodeMemory: records oldest first");
    check(edge::encode_act_text(Id{int64_t{11}}, "put the apple in the fridge", open_fridge, &memory_cands,
                                episode.memory()) == at(vec, "req_act_memory"),
          "req_act_memory: bytes from EpisodeMemory");
    edge::EpisodeMemory last2(2);
    for (int i = 0; i < 5; ++i) last2.record("a" + std::to_string(i), "o" + std::to_string(i));
    check(last2.size() == 2 && last2.steps() == 5 && last2.memory() == edge::Memory{{"a3", "o3"}, {"a4", "o4"}},
          "EpisodeMemory: keeps the last N steps");
    last2.set_keep(1);
    check(last2.memory() == edge::Memory{{"a4", "o4"}}, "EpisodeMemory: set_keep drops the oldest");
    edge::EpisodeMemory none(0);
    none.record("look around", "Room: kitchen.");
    check(none.empty() && none.steps() == 1, "EpisodeMemory(0) holds nothing");
    check(edge::encode_act_text(Id{std::string("robot-1")}, "go north", "Room: hall", nullptr, none.memory()) ==
              at(vec, "req_act_skills"),
          "EpisodeMemory(0): requests carry no memory");
    edge::EpisodeMemory big(100000), unbounded;
    for (size_t i = 0; i < edge::kMaxMemory + 3; ++i) big.record("a", "o"), unbounded.record("a", "o");
    check(big.keep() == edge::kMaxMemory && big.size() == edge::kMaxMemory && unbounded.size() == edge::kMaxMemory,
          "EpisodeMemory: at most kMaxMemory steps");
    edge::Reply info = edge::decode_reply(at(vec, "rep_info"));
    check(info.ok && info.embedding_dim == 384 && info.candidate_dim == 384 && info.bundle_format == 2 &&
              info.horizon == 8 && info.memory == 8,
          "rep_info: dims, bundle_format, horizon");
    check(edge::decode_reply(at(vec, "rep_info_before_horizon")).horizon == 8,
          "rep_info of a daemon before 'horizon': its 'memory' is the horizon");
    check(edge::decode_reply(at(vec, "rep_act")).bundle_format == 0, "rep_act: no bundle_format");
    edge::Reply err = edge::decode_reply(at(vec, "rep_error"));
    check(!err.ok && std::get<int64_t>(err.id) == 5 && err.code == "unknown_op" && err.message == "unknown op 'jump'",
          "rep_error");
    bool threw = false;
    try {
        edge::decode_reply(at(vec, "rep_act").substr(0, 10));
    } catch (const edge::ProtocolError&) {
        threw = true;
    }
    check(threw, "truncated reply must throw ProtocolError");
    if (failures) return 1;
    std::cout << "protocol vectors: " << mine.size() << " requests encoded, 3 replies decoded, all match\n";
    return 0;
}

}  // namespace

using edge_test::unhex;

int main(int argc, char** argv) {
    std::ifstream f;
    if (!edge_test::open_vectors(argc, argv, "edge_protocol_test VECTORS_FILE", f)) return 2;
    Vectors vec;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string name, h;
        ss >> name >> h;
        vec[name] = unhex(h);
    }
    try {
        return run(vec);
    } catch (const std::exception& e) {
        std::cerr << "FAIL: " << e.what() << "\n";
        return 1;
    }
}
