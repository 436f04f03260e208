// edge C++ client: the edge-serve wire protocol (msgpack maps over ZeroMQ) and a DEALER client with
// request ids, per-call timeouts and Lazy Pirate retries (the socket is rebuilt after a timeout, so a late
// reply is never taken as the answer to a later request). Byte-compatible with edge/protocol.py: see
// edge/protocol_vectors/vectors.txt and tests/protocol_test.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "edge/episode_memory.hpp"

namespace edge {

constexpr int kProtocolVersion = 1;

// A request id: none, an integer or a string (echoed by the server).
using Id = std::variant<std::monostate, int64_t, std::string>;

struct ProtocolError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct TimeoutError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A decoded reply. Fields absent from the reply keep their defaults.
struct Reply {
    bool ok = false;
    Id id;
    int64_t index = -1;
    std::optional<std::string> action;  // empty for embedding input without candidate texts
    std::vector<double> scores;
    std::string model;
    std::string code, message;  // error replies
    std::string status;         // health
    int64_t embedding_dim = 0;  // info: D
    int64_t candidate_dim = 0;  // info: C, a candidate's feature size (D, or 3D for action+arguments)
    int64_t bundle_format = 0;  // info: 1, or 2 for a memoryful bundle that takes text input only (0: not
                                // reported, an older daemon: format 1)
    int64_t horizon = 0;        // info: the latest memory pairs the bundle reads, nothing older (0: none);
                                // a daemon before the field sends only "memory", which decode copies here
    int64_t memory = 0;         // info: the same number under its old name (kept one release; use horizon)
    double server_ms = 0.0, infer_ms = 0.0;
    int64_t batch = 0;
};

// ---- encoding (exact bytes; key order v, op, id, fields) ----
std::string encode_simple(const std::string& op, const Id& id);  // info, health
std::string encode_reload(const Id& id, const std::optional<std::string>& bundle);
std::string encode_act_text(const Id& id, const std::string& instruction, const std::string& observation,
                            const std::vector<std::string>* candidates);
// With the episode so far (oldest first), sent as "memory" after "candidates"; an empty memory is omitted (the
// bytes of the overload above). Text input only: embedding requests carry no memory.
std::string encode_act_text(const Id& id, const std::string& instruction, const std::string& observation,
                            const std::vector<std::string>* candidates, const Memory& memory);
// instruction/observation: D floats; candidates: K*C floats, row-major (C: info's candidate_dim).
std::string encode_act_embeddings(const Id& id, const std::vector<float>& instruction,
                                  const std::vector<float>& observation, const std::vector<float>& candidates,
                                  size_t k, const std::vector<std::string>* candidate_texts);
Reply decode_reply(const std::string& bytes);  // throws ProtocolError

std::string to_json(const Reply& r);  // one line, for tools
std::string hex(const std::string& bytes);

// CURVE keys (Z85, 40 characters) read from zmq.auth certificate files (edge-serve keygen).
struct CurveKeys {
    std::string server_public, client_public, client_secret;
    static CurveKeys from_files(const std::string& server_key_file, const std::string& client_secret_file);
};

struct ClientOptions {
    int timeout_ms = 2000;
    int retries = 2;
    std::optional<CurveKeys> curve;
};

class Client {
  public:
    Client(std::string endpoint, ClientOptions options = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    Reply act(const std::string& instruction, const std::string& observation,
              const std::vector<std::string>* candidates);
    // With the episode so far: (action, observation it led to) per earlier step, oldest first, at most
    // kMaxMemory; EpisodeMemory keeps it. Format-2 bundles read the last info().horizon pairs, format 1 ignore it.
    Reply act(const std::string& instruction, const std::string& observation,
              const std::vector<std::string>* candidates, const Memory& memory);
    // Embedding input: format-1 bundles only (a format-2 bundle answers bad_request: send text).
    Reply act_embeddings(const std::vector<float>& instruction, const std::vector<float>& observation,
                         const std::vector<float>& candidates, size_t k);
    Reply info();
    Reply health();
    // Sends build(id) with a fresh integer id; returns the reply with that id or throws TimeoutError.
    template <class Build>
    Reply request(Build build) { return request_bytes([&](int64_t id) { return build(Id{id}); }); }

    int64_t reconnects() const { return reconnects_; }
    int64_t stale_dropped() const { return stale_dropped_; }
    void close();

  private:
    struct Impl;
    Reply request_bytes(const std::function<std::string(int64_t)>& build);
    void open();
    std::unique_ptr<Impl> impl_;
    std::string endpoint_;
    ClientOptions opt_;
    int64_t next_id_;
    int64_t reconnects_ = 0, stale_dropped_ = 0;
};

}  // namespace edge
