// Checks the C++ encoder against the shared byte vectors (edge/protocol_vectors/vectors.txt) and decodes the
// reply vectors. Usage: edge_protocol_test VECTORS_FILE. Keep in step with edge/protocol_vectors/__init__.py.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

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
}  // namespace

using edge_test::unhex;

int main(int argc, char** argv) {
    std::ifstream f;
    if (!edge_test::open_vectors(argc, argv, "edge_protocol_test VECTORS_FILE", f)) return 2;
    std::map<std::string, std::string> vec;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string name, h;
        ss >> name >> h;
        vec[name] = unhex(h);
    }
    using edge::Id;
    const std::vector<std::string> cands = {"take apple", "look around"};
    std::map<std::string, std::string> mine = {
        {"req_health", edge::encode_simple("health", Id{})},
        {"req_info_id7", edge::encode_simple("info", Id{int64_t{7}})},
        {"req_act_text", edge::encode_act_text(Id{int64_t{42}}, "put the apple in the fridge", "Room: kitchen", &cands)},
        {"req_act_skills", edge::encode_act_text(Id{std::string("robot-1")}, "go north", "Room: hall", nullptr)},
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
    edge::Reply act = edge::decode_reply(vec.at("rep_act"));
    check(act.ok && std::get<int64_t>(act.id) == 42 && act.index == 1, "rep_act: ok/id/index");
    check(act.action && *act.action == "look around", "rep_act: action");
    check(act.scores.size() == 2 && act.scores[0] == 0.5 && act.scores[1] == 1.25, "rep_act: scores");
    std::string model;
    for (int i = 0; i < 32; ++i) model += "ab";
    check(act.model == model, "rep_act: model");
    check(act.server_ms == 0.25 && act.infer_ms == 0.125 && act.batch == 1, "rep_act: timing");
    edge::Reply err = edge::decode_reply(vec.at("rep_error"));
    check(!err.ok && std::get<int64_t>(err.id) == 5 && err.code == "unknown_op" && err.message == "unknown op 'jump'",
          "rep_error");
    bool threw = false;
    try {
        edge::decode_reply(vec.at("rep_act").substr(0, 10));
    } catch (const edge::ProtocolError&) {
        threw = true;
    }
    check(threw, "truncated reply must throw ProtocolError");
    if (failures) return 1;
    std::cout << "protocol vectors: " << mine.size() << " requests encoded, 2 replies decoded, all match\n";
    return 0;
}
