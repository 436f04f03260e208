// Shared by the C++ test programs that read vector files written by the Python side: hex strings and the
// one-argument command line.
#pragma once

#include <cstddef>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace edge_test {

inline std::string unhex(const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
}

// Opens argv[1]; on a wrong command line or an unreadable file prints why and returns false (exit status 2).
inline bool open_vectors(int argc, char** argv, const char* usage, std::ifstream& f) {
    if (argc != 2) {
        std::cerr << "usage: " << usage << "\n";
        return false;
    }
    f.open(argv[1]);
    if (!f) {
        std::cerr << "cannot read " << argv[1] << "\n";
        return false;
    }
    return true;
}

// The rest of a recorded step line after its kind: "OBS_HEX PICK K CAND_HEX... SCORE...".
struct Step {
    std::string observation;
    std::size_t pick = 0;
    std::vector<std::string> candidates;
    std::vector<double> scores;
};

inline Step read_step(std::istringstream& ss) {
    Step st;
    std::string obs;
    std::size_t k = 0;
    ss >> obs >> st.pick >> k;
    st.observation = unhex(obs);
    st.candidates.resize(k);
    st.scores.resize(k);
    for (auto& c : st.candidates) {
        std::string h;
        ss >> h;
        c = unhex(h);
    }
    for (auto& x : st.scores) ss >> x;
    return st;
}

}  // namespace edge_test
