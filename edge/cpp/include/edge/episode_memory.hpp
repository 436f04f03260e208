// The episode so far, kept by a robot client for memoryful (bundle format 2) policies. The daemon is stateless:
// the client records each step's action and the observation it led to, and sends the pairs with every text act
// request (edge::Client::act with a Memory; the request's "memory" key, see edge/protocol.py). Format-1 bundles
// ignore it. Header-only, standard library only.
//
//   edge::Reply info = client.info();
//   edge::EpisodeMemory episode(static_cast<std::size_t>(info.horizon));  // hold what the bundle reads
//   episode.reset();                                                      // at the start of each episode
//   std::string obs = robot.observe();
//   while (!robot.done()) {
//       edge::Reply r = client.act(instruction, obs, &candidates, episode.memory());   // act
//       if (!r.ok) throw std::runtime_error(r.code + ": " + r.message);
//       const std::string& action = candidates[static_cast<std::size_t>(r.index)];
//       obs = robot.step(action);                                                     // step
//       episode.record(action, obs);                                                  // record
//   }
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace edge {

// The most pairs one act request may carry (edge/protocol.py MAX_MEMORY); the daemon refuses more (bad_field).
constexpr std::size_t kMaxMemory = 512;

// One earlier step of an episode: the action taken and the observation (state text) it led to.
using MemoryStep = std::pair<std::string, std::string>;
// An episode's steps, oldest first: the last pair's observation is the one the next request is about.
using Memory = std::vector<MemoryStep>;

class EpisodeMemory {
  public:
    // keep: how many of the latest steps to hold and send, at most kMaxMemory (larger values are clamped).
    // Take it from the info reply (Reply::horizon: the pairs the served bundle reads; 0 for a format-1 bundle,
    // which reads none, so nothing is sent). The default holds as many as a request may carry.
    explicit EpisodeMemory(std::size_t keep = kMaxMemory) : keep_(clamp(keep)) {}

    // Forgets the episode: call it at the start of each one.
    void reset() {
        steps_.clear();
        recorded_ = 0;
    }

    // After acting: the action taken and the observation it led to (the next request's observation). The
    // oldest step is dropped once more than keep() are held.
    void record(std::string action, std::string next_observation) {
        ++recorded_;
        if (keep_ == 0) return;
        if (steps_.size() == keep_) steps_.erase(steps_.begin());
        steps_.emplace_back(std::move(action), std::move(next_observation));
    }

    // The held steps, oldest first: what Client::act sends as the request's memory.
    const Memory& memory() const { return steps_; }
    std::size_t size() const { return steps_.size(); }
    bool empty() const { return steps_.empty(); }
    // Steps recorded since reset(), those no longer held included.
    std::size_t steps() const { return recorded_; }
    std::size_t keep() const { return keep_; }

    // Changes the cap (say, after a reload to a bundle that reads more or fewer steps); drops the oldest
    // steps beyond it. Steps already dropped do not come back.
    void set_keep(std::size_t keep) {
        keep_ = clamp(keep);
        if (steps_.size() > keep_)
            steps_.erase(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(steps_.size() - keep_));
    }

  private:
    static std::size_t clamp(std::size_t keep) { return keep < kMaxMemory ? keep : kMaxMemory; }
    Memory steps_;
    std::size_t keep_;
    std::size_t recorded_ = 0;
};

}  // namespace edge
