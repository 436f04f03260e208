// Shared by the C++ test programs that read vector files written by the Python side: hex strings and the
// one-argument command line.
#pragma once

#include <fstream>
#include <iostream>
#include <string>

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

}  // namespace edge_test
