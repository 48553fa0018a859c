// A plaintext TCP connection to one Kafka broker for the native fetch path: whole request frames
// out, whole response frames in. One thread may send while another receives.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice::brokerd::kafka {

// Bytes received from a broker. Reused between responses: a fresh multi-MiB allocation per fetch
// would cost its page faults every time.
struct FrameBuffer {
  std::unique_ptr<char[]> bytes;
  size_t capacity = 0;
  size_t size = 0;

  std::string_view view() const { return {bytes.get(), size}; }
};

class BrokerConnection {
 public:
  // `address` is host:port, as cluster metadata names a broker.
  static Result<std::unique_ptr<BrokerConnection>> Connect(const std::string& address,
                                                           std::chrono::milliseconds timeout);
  ~BrokerConnection();
  BrokerConnection(const BrokerConnection&) = delete;
  BrokerConnection& operator=(const BrokerConnection&) = delete;

  Status Send(std::string_view frame);
  // Reads one whole response frame (without its size prefix) into `buffer`. A frame larger than
  // `max_frame` is refused: a broker that says so is not one this path can speak to.
  Status Receive(FrameBuffer& buffer, size_t max_frame);

  // Ends both directions: a thread blocked in Receive returns with an error.
  void Shutdown();
  const std::string& address() const { return address_; }

 private:
  BrokerConnection(int fd, std::string address) : fd_(fd), address_(std::move(address)) {}
  Status Error(const std::string& what, int error) const;

  int fd_;
  std::string address_;
};

}  // namespace sluice::brokerd::kafka
