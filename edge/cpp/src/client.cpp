// DEALER client with request ids, per-call timeouts and Lazy Pirate retries (zguide): after a timeout the
// socket is closed (linger 0) and rebuilt, so a late reply to an earlier attempt can never be read as the
// answer to a later request; replies whose id differs from the current request's are dropped as stale.
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <zmq.hpp>

#include "edge/client.hpp"

namespace edge {

struct Client::Impl {
    zmq::context_t ctx{1};
    std::unique_ptr<zmq::socket_t> sock;
};

namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// zmq.auth certificate files hold lines like:  public-key = "Z85..."
std::string cert_value(const std::string& text, const std::string& name, const std::string& path) {
    auto pos = text.find(name);
    if (pos == std::string::npos) throw std::runtime_error(path + ": no " + name + " (not a zmq.auth certificate)");
    auto q1 = text.find('"', pos);
    auto q2 = q1 == std::string::npos ? q1 : text.find('"', q1 + 1);
    if (q2 == std::string::npos || q2 - q1 - 1 != 40) throw std::runtime_error(path + ": malformed " + name);
    return text.substr(q1 + 1, 40);
}

}  // namespace

CurveKeys CurveKeys::from_files(const std::string& server_key_file, const std::string& client_secret_file) {
    CurveKeys k;
    std::string server = read_file(server_key_file), client = read_file(client_secret_file);
    k.server_public = cert_value(server, "public-key", server_key_file);
    k.client_public = cert_value(client, "public-key", client_secret_file);
    k.client_secret = cert_value(client, "secret-key", client_secret_file);
    return k;
}

Client::Client(std::string endpoint, ClientOptions options)
    : impl_(std::make_unique<Impl>()), endpoint_(std::move(endpoint)), opt_(std::move(options)) {
    if (opt_.timeout_ms <= 0) throw std::invalid_argument("timeout_ms must be > 0");
    if (opt_.retries < 0) throw std::invalid_argument("retries must be >= 0");
    std::random_device rd;
    next_id_ = static_cast<int64_t>(rd() & 0x3fffffff);
    open();
}

Client::~Client() { close(); }

void Client::open() {
    impl_->sock = std::make_unique<zmq::socket_t>(impl_->ctx, zmq::socket_type::dealer);
    impl_->sock->set(zmq::sockopt::linger, 0);
    if (opt_.curve) {
        impl_->sock->set(zmq::sockopt::curve_serverkey, opt_.curve->server_public);
        impl_->sock->set(zmq::sockopt::curve_publickey, opt_.curve->client_public);
        impl_->sock->set(zmq::sockopt::curve_secretkey, opt_.curve->client_secret);
    }
    impl_->sock->connect(endpoint_);
}

void Client::close() {
    if (impl_ && impl_->sock) {
        impl_->sock->close();
        impl_->sock.reset();
    }
}

Reply Client::request_bytes(const std::function<std::string(int64_t)>& build) {
    if (!impl_->sock) throw std::runtime_error("client is closed");
    using clock = std::chrono::steady_clock;
    for (int attempt = 0; attempt <= opt_.retries; ++attempt) {
        const int64_t id = ++next_id_;
        const std::string payload = build(id);
        impl_->sock->send(zmq::buffer(payload), zmq::send_flags::none);
        const auto deadline = clock::now() + std::chrono::milliseconds(opt_.timeout_ms);
        while (true) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
            if (left <= 0) break;
            zmq::pollitem_t items[] = {{static_cast<void*>(*impl_->sock), 0, ZMQ_POLLIN, 0}};
            zmq::poll(items, 1, std::chrono::milliseconds(left));
            if (!(items[0].revents & ZMQ_POLLIN)) break;
            zmq::message_t part;
            std::string last;
            do {  // a REQ-style envelope may precede the payload: keep the last frame
                (void)impl_->sock->recv(part, zmq::recv_flags::none);
                last.assign(static_cast<const char*>(part.data()), part.size());
            } while (part.more());
            Reply r;
            try {
                r = decode_reply(last);
            } catch (const ProtocolError&) {
                ++stale_dropped_;
                continue;
            }
            auto* rid = std::get_if<int64_t>(&r.id);
            if (rid && *rid == id) return r;
            ++stale_dropped_;  // an answer to an earlier attempt: never returned for this one
        }
        close();  // Lazy Pirate: drop the socket with whatever it may still receive, then rebuild it
        open();
        ++reconnects_;
    }
    throw TimeoutError("no reply from " + endpoint_ + " within " + std::to_string(opt_.timeout_ms) + " ms after " +
                       std::to_string(opt_.retries + 1) + " attempt(s)");
}

Reply Client::act(const std::string& instruction, const std::string& observation,
                  const std::vector<std::string>* candidates) {
    return request_bytes([&](int64_t id) { return encode_act_text(Id{id}, instruction, observation, candidates); });
}

Reply Client::act(const std::string& instruction, const std::string& observation,
                  const std::vector<std::string>* candidates, const Memory& memory) {
    return request_bytes(
        [&](int64_t id) { return encode_act_text(Id{id}, instruction, observation, candidates, memory); });
}

Reply Client::act_embeddings(const std::vector<float>& instruction, const std::vector<float>& observation,
                             const std::vector<float>& candidates, size_t k) {
    return request_bytes(
        [&](int64_t id) { return encode_act_embeddings(Id{id}, instruction, observation, candidates, k, nullptr); });
}

Reply Client::info() {
    return request_bytes([](int64_t id) { return encode_simple("info", Id{id}); });
}

Reply Client::health() {
    return request_bytes([](int64_t id) { return encode_simple("health", Id{id}); });
}

}  // namespace edge
