// edge_bench: round-trip latency of act requests from C++ (embedding input by default, --text for text input).
// A format-2 bundle (info's bundle_format) takes text input only: against one the bench sends text, with the
// episode memory its info asks for (episodes of --episode steps). Prints one JSON line:
// {"n":..., "input":..., "bundle_format":..., "p50_us":..., "p99_us":..., "mean_us":..., "rps":...}.
//   edge_bench --connect tcp://127.0.0.1:5555 --n 2000 --k 8
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <string>

#include "edge/client.hpp"

static int usage(const char* msg) {
    std::cerr << "edge_bench: " << msg << "\n"
              << "usage: edge_bench [--connect ADDR] [--n N] [--warmup N] [--k CANDIDATES] [--text] [--episode STEPS]\n"
              << "                  [--timeout-ms N]\n";
    return 2;
}

int main(int argc, char** argv) {
    std::string connect = "tcp://127.0.0.1:5555";
    int n = 2000, warmup = 200, k = 8, episode_steps = 20;
    bool text = false;
    edge::ClientOptions opt;
    opt.retries = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") return usage("measure act latency"), 0;
        if (a == "--text") {
            text = true;
            continue;
        }
        if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
        std::string v = argv[++i];
        try {
            if (a == "--connect") connect = v;
            else if (a == "--n") n = std::stoi(v);
            else if (a == "--warmup") warmup = std::stoi(v);
            else if (a == "--k") k = std::stoi(v);
            else if (a == "--episode") episode_steps = std::stoi(v);
            else if (a == "--timeout-ms") opt.timeout_ms = std::stoi(v);
            else return usage(("unknown option " + a).c_str());
        } catch (const std::exception&) {
            return usage(("bad value for " + a + ": " + v).c_str());
        }
    }
    if (n < 1 || k < 1 || warmup < 0 || episode_steps < 1) return usage("--n, --k and --episode must be >= 1");
    try {
        edge::Client client(connect, opt);
        const auto info = client.info();
        if (!info.ok) throw std::runtime_error("info failed: " + info.code);
        const int64_t format = info.bundle_format ? info.bundle_format : 1;  // older daemons: format 1
        text = text || format >= 2;  // format 2 refuses embedding input
        // The memory a memoryful bundle reads (none for format 1): the chosen action and the next observation
        // are recorded after each step, as a robot loop does.
        edge::EpisodeMemory episode(static_cast<size_t>(info.horizon));
        const size_t d = static_cast<size_t>(info.embedding_dim);
        const size_t c = info.candidate_dim ? static_cast<size_t>(info.candidate_dim) : d;  // older daemons: D
        std::mt19937 rng(0);
        std::normal_distribution<float> g;
        std::vector<float> ins(d), obs(d), cands(static_cast<size_t>(k) * c);
        for (auto* v : {&ins, &obs, &cands})
            for (auto& x : *v) x = g(rng) * 0.05f;
        std::vector<std::string> texts;
        for (int j = 0; j < k; ++j) texts.push_back("candidate action " + std::to_string(j));
        std::vector<double> us;
        us.reserve(n);
        using clock = std::chrono::steady_clock;
        const auto t_all = clock::now();
        for (int i = 0; i < warmup + n; ++i) {
            if (i % episode_steps == 0) episode.reset();
            const std::string observation = "Room: kitchen " + std::to_string(i);
            const auto t0 = clock::now();
            edge::Reply r = text ? client.act("put the apple in the fridge", observation, &texts, episode.memory())
                                 : client.act_embeddings(ins, obs, cands, static_cast<size_t>(k));
            const auto t1 = clock::now();
            if (!r.ok) throw std::runtime_error("error reply: " + r.code + ": " + r.message);
            if (text && r.index >= 0 && r.index < k)
                episode.record(texts[static_cast<size_t>(r.index)], "Room: kitchen " + std::to_string(i + 1));
            if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        const double total_s = std::chrono::duration<double>(clock::now() - t_all).count();
        std::sort(us.begin(), us.end());
        double sum = 0;
        for (double x : us) sum += x;
        auto pct = [&](double p) { return us[std::min(us.size() - 1, static_cast<size_t>(p * (us.size() - 1) + 0.5))]; };
        std::cout << "{\"n\": " << n << ", \"input\": \"" << (text ? "text" : "embedding")
                  << "\", \"bundle_format\": " << format << ", \"k\": " << k
                  << ", \"p50_us\": " << pct(0.5) << ", \"p99_us\": " << pct(0.99) << ", \"mean_us\": " << sum / us.size()
                  << ", \"rps\": " << (warmup + n) / total_s << "}" << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "edge_bench: error: " << e.what() << "\n";
        return 1;
    }
}
