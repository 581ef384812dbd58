#pragma once
// An in-process HTTP/1.1 server on 127.0.0.1 for the driver tests: a listening thread and
// one thread per connection, keep-alive, Content-Length bodies. The handler decides each
// answer and may inject a fault: a delay (past the client's timeout), a dropped
// connection (closed without an answer) or any status, header and body.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vlbias::test_http {

struct Request {
  std::string method, path, body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
};

struct Response {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;   // before answering
  bool drop = false;  // close the connection without answering
  // No Content-Length: the body ends when the server closes the connection (HTTP/1.0 style),
  // so a client learns its length only by reading it.
  bool close_delimited = false;
};

class Server {
 public:
  using Handler = std::function<Response(const Request&)>;
  explicit Server(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 512);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Server() {
    stopping_ = true;
    acceptor_.join();
    ::close(listen_fd_);
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
      threads.swap(connections_);
    }
    for (auto& t : threads) t.join();
  }
  std::string url(const std::string& path) const {
    return std::string("http://127.0.0.1:").append(std::to_string(port_)).append(path);
  }
  std::size_t requests() const { return requests_; }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard lock(mutex_);
      open_fds_.push_back(fd);
      connections_.emplace_back([this, fd] { serve(fd); });
    }
  }

  // Reads one request; false when the peer closed or sent garbage.
  static bool read_request(int fd, std::string& buffer, Request& r) {
    std::size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      char chunk[8192];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string head = buffer.substr(0, end);
    buffer.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string first = head.substr(0, line_end);
    const auto sp1 = first.find(' '), sp2 = first.rfind(' ');
    if (sp1 == std::string::npos || sp2 == sp1) return false;
    r.method = first.substr(0, sp1);
    r.path = first.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t length = 0;
    while (line_end != std::string::npos && line_end < head.size()) {
      const std::size_t next = head.find("\r\n", line_end + 2);
      const std::string line = head.substr(
          line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
      line_end = next;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (name == "content-length") length = std::stoul(value);
      r.headers.emplace_back(name, value);
    }
    while (buffer.size() < length) {
      char chunk[8192];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    r.body = buffer.substr(0, length);
    buffer.erase(0, length);
    return true;
  }

  void serve(int fd) {
    std::string buffer;
    while (!stopping_) {
      Request req;
      if (!read_request(fd, buffer, req)) break;
      ++requests_;
      const Response res = handler_(req);
      if (res.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(res.delay_ms));
      if (res.drop) break;
      std::string out = "HTTP/1.1 ";
      out.append(std::to_string(res.status)).append(" X\r\n");
      if (res.close_delimited) {
        out.append("Connection: close\r\n");
      } else {
        out.append("Content-Length: ").append(std::to_string(res.body.size())).append("\r\n");
      }
      out.append("Content-Type: application/json\r\n");
      for (const auto& [k, v] : res.headers) out.append(k).append(": ").append(v).append("\r\n");
      out.append("\r\n").append(res.body);
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) break;
      if (res.close_delimited) break;
    }
    ::close(fd);
    std::lock_guard lock(mutex_);
    open_fds_.remove(fd);
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> requests_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::list<int> open_fds_;
  std::vector<std::thread> connections_;
};

}  // namespace vlbias::test_http
