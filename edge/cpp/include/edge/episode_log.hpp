// The robot's episode log: what the deployed policy did, one finished episode per line of the trajectory format
// the labelers read (models/trajectory.py; `edgejudge data validate` passes on the file). The C++ twin of
// edge/episode_log.py: the same lines for the same episodes (tests/edge/test_cpp.py compares them after
// parsing). Header-only, standard library and POSIX only.
//
//   edge::EpisodeLog log("episodes.jsonl", "tidy", world_json);   // world_json: {"state_layout": ..., ...}
//   auto ep = log.episode(instruction);
//   while (!robot.done()) {
//       ...                                                       // act through edge::Client
//       ep.step(state, candidates, action, next_state);
//   }
//   ep.end(success);                                              // one line appended and fsynced
//
// Nothing is written until end(); then the line is appended, flushed and synced to the disk before end()
// returns, so a crash loses at most the episode in progress, and nothing of an earlier episode is ever
// rewritten. A file whose last line was cut by a power loss gets the torn bytes cut off (said on stderr)
// before the first append. Texts must be valid UTF-8 (std::invalid_argument otherwise).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace edge {

namespace episode_log_detail {

// A JSON string literal of UTF-8 text; throws std::invalid_argument on bytes that are not UTF-8.
inline void append_json_string(std::string& out, const std::string& s, const char* what) {
    out.push_back('"');
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    if (c < 0x20) {
                        char buf[8];
                        std::snprintf(buf, sizeof buf, "\\u%04x", c);
                        out += buf;
                    } else {
                        out.push_back(static_cast<char>(c));
                    }
            }
            ++i;
            continue;
        }
        // a multi-byte sequence: its length from the lead byte, then continuation bytes 10xxxxxx
        std::size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = n != 0 && i + n <= s.size() && c >= 0xC2 && c <= 0xF4;
        for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
        if (ok && n == 3) {  // no overlong forms, no UTF-16 surrogates
            const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
        }
        if (ok && n == 4) {
            const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
        }
        if (!ok) throw std::invalid_argument(std::string(what) + ": not UTF-8 text (byte " + std::to_string(i) + ")");
        out.append(s, i, n);
        i += n;
    }
    out.push_back('"');
}

inline std::string json_number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    std::string s(buf);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // a float, as the Python writer's
    return s;
}

// Cuts off a last line the file ends inside (a write cut by a power loss), saying so on stderr; returns the
// bytes cut. Complete lines are never touched.
inline long cut_torn_tail(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) return 0;  // absent: nothing to cut
    struct stat st{};
    if (::fstat(fd, &st) != 0 || st.st_size == 0) {
        ::close(fd);
        return 0;
    }
    const off_t size = st.st_size;
    char last = 0;
    if (::pread(fd, &last, 1, size - 1) != 1 || last == '\n') {
        ::close(fd);
        return 0;
    }
    off_t keep = 0, lines = 0;
    std::vector<char> buf(1 << 16);
    for (off_t pos = 0; pos < size;) {  // forwards: the newlines before the torn line, and the last one
        const ssize_t n = ::pread(fd, buf.data(), buf.size(), pos);
        if (n <= 0) break;
        for (ssize_t k = 0; k < n; ++k)
            if (buf[static_cast<std::size_t>(k)] == '\n') {
                keep = pos + k + 1;
                ++lines;
            }
        pos += n;
    }
    if (::ftruncate(fd, keep) != 0 || ::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        throw std::runtime_error(path + ": cannot cut the torn last line: " + std::strerror(err));
    }
    ::close(fd);
    std::cerr << path << ":" << (lines + 1) << ": torn line (" << (size - keep)
              << " bytes, the file ended inside it): cut off before appending; every complete episode is kept\n";
    return static_cast<long>(size - keep);
}

}  // namespace episode_log_detail

class EpisodeLog {
  public:
    // path: a plain .jsonl file (appended to); task_type: the episodes' task type; meta_json: a JSON object of
    // per-episode metadata, e.g. the bundle's world ({"state_format": ..., "state_layout": {...}}) so the
    // labelers read the states as the policy did; sync: fsync each line (off only for tests and simulation).
    explicit EpisodeLog(std::string path, std::string task_type = "task", std::string meta_json = "{}",
                        bool sync = true)
        : path_(std::move(path)), task_type_(std::move(task_type)), sync_(sync) {
        if (path_.size() >= 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0)
            throw std::invalid_argument(path_ + ": the episode log is plain JSON Lines (.jsonl); compress it after the run");
        std::size_t a = meta_json.find_first_not_of(" \t\r\n"), b = meta_json.find_last_not_of(" \t\r\n");
        if (a == std::string::npos || meta_json[a] != '{' || meta_json[b] != '}')
            throw std::invalid_argument("meta_json must be a JSON object");
        meta_body_ = meta_json.substr(a + 1, b - a - 1);  // its members, spliced before "recorded_by"
        if (meta_body_.find_first_not_of(" \t\r\n") == std::string::npos) meta_body_.clear();
        episode_log_detail::cut_torn_tail(path_);
        session_ = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000000);
    }

    class Episode {
      public:
        // One decision: the state acted on, its candidates, the action taken (one of them), the state that
        // followed, and the robot's own reward for the step (0 unless it has one).
        void step(const std::string& state, const std::vector<std::string>& candidates, const std::string& action,
                  const std::string& next_state, double reward = 0.0) {
            if (ended_) throw std::logic_error("episode " + id_ + " has ended: start a new one");
            if (!std::isfinite(reward))
                throw std::invalid_argument("episode " + id_ + " step " + std::to_string(steps_) + ": reward is not finite");
            bool found = candidates.empty();
            for (const auto& c : candidates) found = found || c == action;
            if (!found)
                throw std::invalid_argument("episode " + id_ + " step " + std::to_string(steps_) + ": '" + action +
                                            "' is not among its " + std::to_string(candidates.size()) + " candidates");
            std::string s = steps_ ? "," : "";
            s += "{\"observation\":";
            episode_log_detail::append_json_string(s, state, "state");
            s += ",\"action\":";
            episode_log_detail::append_json_string(s, action, "action");
            s += ",\"candidates\":[";
            for (std::size_t i = 0; i < candidates.size(); ++i) {
                if (i) s += ",";
                episode_log_detail::append_json_string(s, candidates[i], "candidate");
            }
            s += "],\"next_observation\":";
            episode_log_detail::append_json_string(s, next_state, "next_state");
            s += ",\"env_reward\":" + episode_log_detail::json_number(reward) + ",\"info\":{}}";
            steps_json_ += s;  // only once every text of the step was valid
            ++steps_;
        }

        // The outcome the robot reports: appends the episode (one line, synced). An episode without a step is
        // not written (std::logic_error).
        void end(bool success) {
            if (ended_) throw std::logic_error("episode " + id_ + " has ended already");
            if (steps_ == 0) throw std::logic_error("episode " + id_ + ": no step recorded, nothing to write");
            std::string line = "{\"format\":1,\"id\":";
            episode_log_detail::append_json_string(line, id_, "id");
            line += ",\"instruction\":";
            episode_log_detail::append_json_string(line, instruction_, "instruction");
            line += ",\"task_type\":";
            episode_log_detail::append_json_string(line, log_->task_type_, "task_type");
            line += success ? ",\"success\":true" : ",\"success\":false";
            line += ",\"steps\":[" + steps_json_ + "],\"meta\":{";
            if (!log_->meta_body_.empty()) line += log_->meta_body_ + ",";
            line += "\"recorded_by\":\"edge::EpisodeLog\"}}\n";
            log_->append(line);
            ended_ = true;
        }

        const std::string& id() const { return id_; }
        std::size_t steps() const { return steps_; }

      private:
        friend class EpisodeLog;
        Episode(EpisodeLog* log, std::string id, std::string instruction)
            : log_(log), id_(std::move(id)), instruction_(std::move(instruction)) {}
        EpisodeLog* log_;
        std::string id_, instruction_, steps_json_;
        std::size_t steps_ = 0;
        bool ended_ = false;
    };

    // A new episode to record; its id is `id` or one unique to this log session and episode.
    Episode episode(std::string instruction, std::string id = "") {
        if (id.empty()) id = session_ + "-" + std::to_string(++started_);
        return Episode(this, std::move(id), std::move(instruction));
    }

    // Episodes this log appended.
    std::size_t written() const { return written_; }
    const std::string& path() const { return path_; }

  private:
    void append(const std::string& line) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
        for (std::size_t done = 0; done < line.size();) {
            const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int err = errno;
                ::close(fd);
                throw std::runtime_error(path_ + ": write failed: " + std::strerror(err));
            }
            done += static_cast<std::size_t>(n);
        }
        if (sync_ && ::fsync(fd) != 0) {
            const int err = errno;
            ::close(fd);
            throw std::runtime_error(path_ + ": fsync failed: " + std::strerror(err));
        }
        ::close(fd);
        ++written_;
    }

    std::string path_, task_type_, meta_body_, session_;
    bool sync_;
    std::size_t written_ = 0, started_ = 0;
};

}  // namespace edge
