// Wire protocol encoding/decoding with msgpack-c (the C API of Debian's libmsgpack-dev).
#include <msgpack.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "edge/client.hpp"

namespace edge {
namespace {

struct Packer {
    msgpack_sbuffer buf;
    msgpack_packer pk;
    Packer() {
        msgpack_sbuffer_init(&buf);
        msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    }
    ~Packer() { msgpack_sbuffer_destroy(&buf); }
    Packer(const Packer&) = delete;
    Packer& operator=(const Packer&) = delete;

    void str(const std::string& s) {
        msgpack_pack_str(&pk, s.size());
        msgpack_pack_str_body(&pk, s.data(), s.size());
    }
    void bin(const void* data, size_t n) {
        msgpack_pack_bin(&pk, n);
        msgpack_pack_bin_body(&pk, data, n);
    }
    void integer(int64_t v) {
        if (v >= 0)
            msgpack_pack_uint64(&pk, static_cast<uint64_t>(v));  // same minimal width as Python's msgpack
        else
            msgpack_pack_int64(&pk, v);
    }
    void map(size_t n) { msgpack_pack_map(&pk, n); }
    void array(size_t n) { msgpack_pack_array(&pk, n); }
    void id(const Id& id) {
        if (auto* i = std::get_if<int64_t>(&id)) integer(*i);
        else if (auto* s = std::get_if<std::string>(&id)) str(*s);
    }
    static bool has_id(const Id& id) { return !std::holds_alternative<std::monostate>(id); }
    // v, op, id: the common head of every request map with `fields` more entries.
    void head(const std::string& op, const Id& rid, size_t fields) {
        map(2 + (has_id(rid) ? 1 : 0) + fields);
        str("v");
        integer(kProtocolVersion);
        str("op");
        str(op);
        if (has_id(rid)) {
            str("id");
            id(rid);
        }
    }
    void strings(const std::vector<std::string>& v) {
        array(v.size());
        for (const auto& s : v) str(s);
    }
    void float_array(const std::vector<float>& data, const std::vector<size_t>& shape) {
        map(3);
        str("dtype");
        str("float32");
        str("shape");
        array(shape.size());
        for (size_t s : shape) integer(static_cast<int64_t>(s));
        str("data");
        // Little-endian float32, as the protocol fixes (x86 and arm64 are little-endian).
        bin(data.data(), data.size() * sizeof(float));
    }
    std::string bytes() const { return std::string(buf.data, buf.size); }
};

std::string as_string(const msgpack_object& o) {
    if (o.type == MSGPACK_OBJECT_STR) return std::string(o.via.str.ptr, o.via.str.size);
    throw ProtocolError("expected a string in the reply");
}

double as_double(const msgpack_object& o) {
    switch (o.type) {
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64: return o.via.f64;
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return static_cast<double>(o.via.u64);
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return static_cast<double>(o.via.i64);
        default: throw ProtocolError("expected a number in the reply");
    }
}

int64_t as_int(const msgpack_object& o) {
    if (o.type == MSGPACK_OBJECT_POSITIVE_INTEGER) return static_cast<int64_t>(o.via.u64);
    if (o.type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return o.via.i64;
    throw ProtocolError("expected an integer in the reply");
}

std::string json_escape(const std::string& s) {
    std::ostringstream out;
    for (unsigned char c : s) {
        switch (c) {
            case '"': out << "\\\""; break;
            case '\\': out << "\\\\"; break;
            case '\n': out << "\\n"; break;
            case '\r': out << "\\r"; break;
            case '\t': out << "\\t"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    out << b;
                } else {
                    out << c;
                }
        }
    }
    return out.str();
}

}  // namespace

std::string encode_simple(const std::string& op, const Id& id) {
    Packer p;
    p.head(op, id, 0);
    return p.bytes();
}

std::string encode_reload(const Id& id, const std::optional<std::string>& bundle) {
    Packer p;
    p.head("reload", id, bundle ? 1 : 0);
    if (bundle) {
        p.str("bundle");
        p.str(*bundle);
    }
    return p.bytes();
}

std::string encode_act_text(const Id& id, const std::string& instruction, const std::string& observation,
                            const std::vector<std::string>* candidates) {
    return encode_act_text(id, instruction, observation, candidates, Memory{});
}

std::string encode_act_text(const Id& id, const std::string& instruction, const std::string& observation,
                            const std::vector<std::string>* candidates, const Memory& memory) {
    Packer p;
    p.head("act", id, 2 + (candidates ? 1 : 0) + (memory.empty() ? 0 : 1));
    p.str("instruction");
    p.str(instruction);
    p.str("observation");
    p.str(observation);
    if (candidates) {
        p.str("candidates");
        p.strings(*candidates);
    }
    if (!memory.empty()) {  // [[action, observation], ...], oldest first
        p.str("memory");
        p.array(memory.size());
        for (const auto& [action, obs] : memory) {
            p.array(2);
            p.str(action);
            p.str(obs);
        }
    }
    return p.bytes();
}

std::string encode_act_embeddings(const Id& id, const std::vector<float>& instruction,
                                  const std::vector<float>& observation, const std::vector<float>& candidates,
                                  size_t k, const std::vector<std::string>* candidate_texts) {
    const size_t d = instruction.size();
    // C, a candidate's feature size, is D or a multiple of it (3D for action+arguments: info's candidate_dim)
    const size_t c = k ? candidates.size() / k : 0;
    if (d == 0 || observation.size() != d || k == 0 || c == 0 || candidates.size() != k * c || c % d != 0)
        throw ProtocolError("embedding sizes disagree: instruction D, observation D, candidates K*C (C a multiple of D)");
    Packer p;
    p.head("act", id, candidate_texts ? 4 : 3);
    p.str("instruction_emb");
    p.float_array(instruction, {d});
    p.str("observation_emb");
    p.float_array(observation, {d});
    p.str("candidates_emb");
    p.float_array(candidates, {k, c});
    if (candidate_texts) {
        p.str("candidates");
        p.strings(*candidate_texts);
    }
    return p.bytes();
}

Reply decode_reply(const std::string& bytes) {
    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    size_t off = 0;
    auto ret = msgpack_unpack_next(&msg, bytes.data(), bytes.size(), &off);
    struct Guard {
        msgpack_unpacked* m;
        ~Guard() { msgpack_unpacked_destroy(m); }
    } guard{&msg};
    if (ret != MSGPACK_UNPACK_SUCCESS || off != bytes.size()) throw ProtocolError("reply is not one msgpack value");
    const msgpack_object& root = msg.data;
    if (root.type != MSGPACK_OBJECT_MAP) throw ProtocolError("reply is not a map");
    Reply r;
    bool saw_ok = false;
    for (uint32_t i = 0; i < root.via.map.size; ++i) {
        const msgpack_object& k = root.via.map.ptr[i].key;
        const msgpack_object& v = root.via.map.ptr[i].val;
        if (k.type != MSGPACK_OBJECT_STR) continue;
        std::string key(k.via.str.ptr, k.via.str.size);
        if (key == "ok") {
            if (v.type != MSGPACK_OBJECT_BOOLEAN) throw ProtocolError("'ok' is not a boolean");
            r.ok = v.via.boolean;
            saw_ok = true;
        } else if (key == "id") {
            if (v.type == MSGPACK_OBJECT_STR) r.id = as_string(v);
            else if (v.type == MSGPACK_OBJECT_POSITIVE_INTEGER || v.type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
                r.id = as_int(v);
        } else if (key == "index") {
            r.index = as_int(v);
        } else if (key == "action") {
            if (v.type == MSGPACK_OBJECT_STR) r.action = as_string(v);
        } else if (key == "scores") {
            if (v.type != MSGPACK_OBJECT_ARRAY) throw ProtocolError("'scores' is not an array");
            for (uint32_t j = 0; j < v.via.array.size; ++j) r.scores.push_back(as_double(v.via.array.ptr[j]));
        } else if (key == "model") {
            if (v.type == MSGPACK_OBJECT_STR) r.model = as_string(v);
        } else if (key == "code") {
            r.code = as_string(v);
        } else if (key == "message") {
            r.message = as_string(v);
        } else if (key == "status") {
            r.status = as_string(v);
        } else if (key == "embedding_dim") {
            r.embedding_dim = as_int(v);
        } else if (key == "candidate_dim") {
            r.candidate_dim = as_int(v);
        } else if (key == "bundle_format") {
            if (v.type == MSGPACK_OBJECT_POSITIVE_INTEGER) r.bundle_format = as_int(v);
        } else if (key == "horizon") {
            if (v.type == MSGPACK_OBJECT_POSITIVE_INTEGER) r.horizon = as_int(v);
        } else if (key == "memory") {
            if (v.type == MSGPACK_OBJECT_POSITIVE_INTEGER) r.memory = as_int(v);
        } else if (key == "timing" && v.type == MSGPACK_OBJECT_MAP) {
            for (uint32_t j = 0; j < v.via.map.size; ++j) {
                const msgpack_object& tk = v.via.map.ptr[j].key;
                if (tk.type != MSGPACK_OBJECT_STR) continue;
                std::string t(tk.via.str.ptr, tk.via.str.size);
                if (t == "server_ms") r.server_ms = as_double(v.via.map.ptr[j].val);
                else if (t == "infer_ms") r.infer_ms = as_double(v.via.map.ptr[j].val);
                else if (t == "batch") r.batch = as_int(v.via.map.ptr[j].val);
            }
        }
    }
    if (!saw_ok) throw ProtocolError("reply has no 'ok'");
    if (!r.horizon) r.horizon = r.memory;  // a daemon before "horizon" sends the number as "memory" only
    return r;
}

std::string hex(const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

std::string to_json(const Reply& r) {
    std::ostringstream o;
    o.precision(9);
    o << "{\"ok\": " << (r.ok ? "true" : "false") << ", \"id\": ";
    if (auto* i = std::get_if<int64_t>(&r.id)) o << *i;
    else if (auto* s = std::get_if<std::string>(&r.id)) o << '"' << json_escape(*s) << '"';
    else o << "null";
    if (!r.ok) {
        o << ", \"code\": \"" << json_escape(r.code) << "\", \"message\": \"" << json_escape(r.message) << "\"}";
        return o.str();
    }
    if (r.index >= 0) {
        o << ", \"index\": " << r.index << ", \"action\": ";
        if (r.action) o << '"' << json_escape(*r.action) << '"';
        else o << "null";
        o << ", \"scores\": [";
        for (size_t i = 0; i < r.scores.size(); ++i) o << (i ? ", " : "") << r.scores[i];
        o << "], \"server_ms\": " << r.server_ms << ", \"batch\": " << r.batch;
    }
    if (!r.status.empty()) o << ", \"status\": \"" << json_escape(r.status) << '"';
    if (r.embedding_dim) o << ", \"embedding_dim\": " << r.embedding_dim;
    if (r.candidate_dim) o << ", \"candidate_dim\": " << r.candidate_dim;
    if (r.bundle_format) o << ", \"bundle_format\": " << r.bundle_format << ", \"horizon\": " << r.horizon;
    if (!r.model.empty()) o << ", \"model\": \"" << r.model << '"';
    o << "}";
    return o.str();
}

}  // namespace edge
