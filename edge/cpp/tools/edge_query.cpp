// edge_query: send one request to edge-serve and print the reply as one JSON line (exit 1 on an error reply).
//   edge_query --connect tcp://127.0.0.1:5555 --instruction "..." --observation "..." --candidate a --candidate b
//   edge_query --connect tcp://127.0.0.1:5555 --op info
// --memory ACTION OBSERVATION (repeatable, oldest first) sends the episode so far with a text act request;
// with --keep N, or --keep info (the daemon's info().horizon), the pairs go through an edge::EpisodeMemory that
// keeps the last N, as a robot following the documented recipe does.
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "edge/client.hpp"

static int usage(const char* msg) {
    std::cerr << "edge_query: " << msg << "\n"
              << "usage: edge_query [--connect ADDR] [--op act|info|health] [--instruction TEXT] [--observation TEXT]\n"
              << "                  [--candidate TEXT]... [--memory ACTION OBSERVATION]... [--keep N|info]\n"
              << "                  [--timeout-ms N] [--retries N]\n"
              << "                  [--curve-server-key SERVER.key --curve-client-cert CLIENT.key_secret]\n";
    return 2;
}

int main(int argc, char** argv) {
    std::string connect = "tcp://127.0.0.1:5555", op = "act", instruction, observation, server_key, client_cert;
    std::string keep;
    bool have_instruction = false, have_observation = false;
    std::vector<std::string> candidates;
    edge::Memory memory;
    edge::ClientOptions opt;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") return usage("send one request, print the reply"), 0;
        if (a == "--memory") {  // two values: the action and the observation it led to
            if (i + 2 >= argc) return usage("--memory needs ACTION and OBSERVATION");
            memory.emplace_back(argv[i + 1], argv[i + 2]);
            i += 2;
            continue;
        }
        if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
        std::string v = argv[++i];
        try {
            if (a == "--connect") connect = v;
            else if (a == "--op") op = v;
            else if (a == "--instruction") instruction = v, have_instruction = true;
            else if (a == "--observation") observation = v, have_observation = true;
            else if (a == "--candidate") candidates.push_back(v);
            else if (a == "--keep") keep = v == "info" ? v : std::to_string(std::stoul(v));
            else if (a == "--timeout-ms") opt.timeout_ms = std::stoi(v);
            else if (a == "--retries") opt.retries = std::stoi(v);
            else if (a == "--curve-server-key") server_key = v;
            else if (a == "--curve-client-cert") client_cert = v;
            else return usage(("unknown option " + a).c_str());
        } catch (const std::exception&) {
            return usage(("bad value for " + a + ": " + v).c_str());
        }
    }
    if (op != "act" && op != "info" && op != "health") return usage("--op must be act, info or health");
    if (op == "act" && !(have_instruction && have_observation)) return usage("--op act needs --instruction and --observation");
    if (op != "act" && !memory.empty()) return usage("--memory goes with --op act");
    if (server_key.empty() != client_cert.empty()) return usage("--curve-server-key and --curve-client-cert go together");
    try {
        if (!server_key.empty()) opt.curve = edge::CurveKeys::from_files(server_key, client_cert);
        edge::Client client(connect, opt);
        const auto* cands = candidates.empty() ? nullptr : &candidates;
        if (!keep.empty()) {
            edge::Reply info;
            if (keep == "info" && !(info = client.info()).ok) throw std::runtime_error("info: " + info.message);
            edge::EpisodeMemory episode(keep == "info" ? static_cast<std::size_t>(info.horizon) : std::stoul(keep));
            for (auto& [action, next_observation] : memory) episode.record(action, next_observation);
            memory = episode.memory();
        }
        edge::Reply r = op == "info"     ? client.info()
                        : op == "health" ? client.health()
                                         : client.act(instruction, observation, cands, memory);
        std::cout << edge::to_json(r) << std::endl;
        return r.ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "edge_query: error: " << e.what() << "\n";
        return 1;
    }
}
