// The resumable run store (include/vlbias/generate/run_store.h) over the SQLite C API.
#include "vlbias/generate/run_store.h"

#include <sqlite3.h>

#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias {

// Named, not anonymous: RunStore::Impl holds these types, and in a unity build (where this
// file is included into another) gcc warns about a class member of an anonymous type.
namespace generate_internal::run_store_sql {

constexpr int kSchemaVersion = 1;

// The schema. `seq` keeps insertion order (the manifest's order) for pending() and export.
constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS vlbias_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE,
  request TEXT NOT NULL,
  status INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  http_status INTEGER NOT NULL DEFAULT 0,
  response TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  latency_s REAL NOT NULL DEFAULT 0,
  updated_utc TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS requests_by_status ON requests(status, seq);
)";

struct DbClose {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbClose>;

// A prepared statement, reset and cleared after each use.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql, const std::filesystem::path& path) : db_(db), path_(path) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    stmt_.reset(s);
    VLBIAS_CHECK(rc == SQLITE_OK, InputError, "{}: not a vlbias run store ({})", path.string(),
                 sqlite3_errmsg(db));
  }
  Stmt& bind(int i, const std::string& v) {
    check(
        sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, long long v) {
    check(sqlite3_bind_int64(stmt_.get(), i, v));
    return *this;
  }
  Stmt& bind_double(int i, double v) {
    check(sqlite3_bind_double(stmt_.get(), i, v));
    return *this;
  }
  // One step: true when a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    check(rc == SQLITE_DONE ? SQLITE_OK : rc);
    return false;
  }
  void done() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_.get(), col);
    return p == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(p),
                             static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col)));
  }
  long long integer(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  double real(int col) const { return sqlite3_column_double(stmt_.get(), col); }

 private:
  void check(int rc) {
    if (rc == SQLITE_OK) return;
    const std::string message = sqlite3_errmsg(db_);
    done();
    VLBIAS_FAIL(InternalError, "{}: SQLite error: {}", path_.string(), message);
  }
  sqlite3* db_;
  const std::filesystem::path& path_;
  std::unique_ptr<sqlite3_stmt, StmtFinalize> stmt_;
};

void exec(sqlite3* db, const char* sql, const std::filesystem::path& path, bool input_error) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return;
  const std::string message = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  if (input_error || rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
    VLBIAS_FAIL(InputError, "{}: not a vlbias run store ({})", path.string(), message);
  }
  VLBIAS_FAIL(InternalError, "{}: SQLite error: {}", path.string(), message);
}

// The columns of a RequestRecord, in record_of's order.
constexpr const char* kRecordColumns =
    "key, request, status, attempts, http_status, response, error, latency_s, updated_utc";

// The row a statement stepped onto; its columns are kRecordColumns, in that order.
RequestRecord record_of(const Stmt& s) {
  RequestRecord r;
  r.key = s.text(0);
  r.request = s.text(1);
  r.status = static_cast<RequestStatus>(s.integer(2));
  r.attempts = static_cast<int>(s.integer(3));
  r.http_status = static_cast<int>(s.integer(4));
  r.response = s.text(5);
  r.error = s.text(6);
  r.latency_s = s.real(7);
  r.updated_utc = s.text(8);
  return r;
}

}  // namespace generate_internal::run_store_sql

using namespace generate_internal::run_store_sql;

const char* to_string(RequestStatus status) {
  switch (status) {
    case RequestStatus::Pending:
      return "pending";
    case RequestStatus::Done:
      return "done";
    case RequestStatus::Refused:
      return "refused";
    case RequestStatus::Failed:
      return "failed";
  }
  return "unknown";
}

struct RunStore::Impl {
  Db db;
  mutable std::mutex mutex;
  std::filesystem::path path;
  // The statements of the per-request hot path, prepared once (after the schema exists).
  std::unique_ptr<Stmt> finish_update, status_of, row_of;

  void prepare() {
    finish_update = std::make_unique<Stmt>(
        db.get(),
        "UPDATE requests SET status = ?2, attempts = attempts + 1, http_status = ?3, "
        "response = ?4, error = ?5, latency_s = ?6, updated_utc = ?7 WHERE key = ?1 AND status = 0",
        path);
    status_of =
        std::make_unique<Stmt>(db.get(), "SELECT status FROM requests WHERE key = ?1", path);
    row_of = std::make_unique<Stmt>(db.get(),
                                    std::string("SELECT ")
                                        .append(kRecordColumns)
                                        .append(" FROM requests WHERE key = ?1")
                                        .c_str(),
                                    path);
  }

  // Moves a Pending row to `status` (or keeps it Pending for a retried attempt): one UPDATE
  // guarded by status = Pending; only when it changes nothing is the row looked up, to say why.
  void finish(const std::string& key, RequestStatus status, const std::string& response,
              const std::string& error, int http_status, double latency_s) {
    std::lock_guard lock(mutex);
    Stmt& update = *finish_update;
    update.bind(1, key)
        .bind(2, static_cast<long long>(status))
        .bind(3, static_cast<long long>(http_status))
        .bind(4, response)
        .bind(5, error)
        .bind_double(6, latency_s)
        .bind(7, utc_now());
    update.step();
    update.done();
    if (sqlite3_changes(db.get()) == 1) return;
    Stmt& find = *status_of;
    find.bind(1, key);
    const bool found = find.step();
    const auto current =
        found ? static_cast<RequestStatus>(find.integer(0)) : RequestStatus::Pending;
    find.done();
    VLBIAS_CHECK(found, InputError, "{}: no request with key '{}'", path.string(), key);
    VLBIAS_FAIL(InternalError,
                "{}: request '{}' is already {}; recording it again would do it twice",
                path.string(), key, to_string(current));
  }
};

RunStore::RunStore(const std::filesystem::path& path, const std::string& fingerprint)
    : path_(path), impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  VLBIAS_CHECK(!std::filesystem::is_directory(path), InputError,
               "{}: is a folder; the run store is a file", path.string());
  // SQLite resolves a link at the database's name and writes its target (and a -wal beside
  // it), so a link planted there would have the run written elsewhere.
  refuse_symbolic_link(path, "the run store");
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.string().c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  impl_->db.reset(raw);
  VLBIAS_CHECK(rc == SQLITE_OK, InputError, "{}: cannot open the run store ({})", path.string(),
               raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
  sqlite3* db = impl_->db.get();
  sqlite3_busy_timeout(db, 10000);
  // The first statement reads the header: a file that is not SQLite fails here.
  exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", path, true);

  // A database with tables but no vlbias_meta is someone else's.
  {
    Stmt tables(db, "SELECT name FROM sqlite_master WHERE type = 'table'", path);
    std::set<std::string> names;
    while (tables.step()) names.insert(tables.text(0));
    tables.done();
    names.erase("sqlite_sequence");
    VLBIAS_CHECK(names.empty() || names.count("vlbias_meta") > 0, InputError,
                 "{}: an SQLite database but not a vlbias run store (it has no vlbias_meta table)",
                 path.string());
  }
  exec(db, "BEGIN IMMEDIATE", path, false);
  try {
    exec(db, kSchema, path, false);
    Stmt get(db, "SELECT value FROM vlbias_meta WHERE name = ?1", path);
    auto meta = [&](const std::string& name) -> std::pair<bool, std::string> {
      get.bind(1, name);
      const bool found = get.step();
      std::string value = found ? get.text(0) : std::string();
      get.done();
      return {found, value};
    };
    Stmt put(db, "INSERT INTO vlbias_meta (name, value) VALUES (?1, ?2)", path);
    const auto [has_version, version] = meta("schema_version");
    if (!has_version) {
      for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
               {"schema_version", std::to_string(kSchemaVersion)},
               {"fingerprint", fingerprint},
               {"created_utc", utc_now()}}) {
        put.bind(1, name).bind(2, value);
        put.step();
        put.done();
      }
    } else {
      VLBIAS_CHECK(version == std::to_string(kSchemaVersion), InputError,
                   "{}: run store schema version {} (this vlbias reads version {})", path.string(),
                   version, kSchemaVersion);
      const auto [has_fp, stored] = meta("fingerprint");
      VLBIAS_CHECK(has_fp && stored == fingerprint, UsageError,
                   "{}: this store belongs to another run (its requests were made with different "
                   "options); use a new store, or the spec it was made with",
                   path.string());
    }
    exec(db, "COMMIT", path, false);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  impl_->prepare();
}

RunStore::~RunStore() = default;

std::size_t RunStore::add(const std::vector<std::pair<std::string, std::string>>& requests) {
  std::unordered_map<std::string, const std::string*> seen;
  for (const auto& [key, request] : requests) {
    VLBIAS_CHECK(!key.empty(), InputError, "{}: a request has an empty key", path_.string());
    const auto [it, inserted] = seen.emplace(key, &request);
    VLBIAS_CHECK(inserted || *it->second == request, InputError,
                 "{}: key '{}' is given twice with different requests", path_.string(), key);
  }
  std::lock_guard lock(impl_->mutex);
  sqlite3* db = impl_->db.get();
  exec(db, "BEGIN IMMEDIATE", path_, false);
  std::size_t added = 0;
  try {
    Stmt find(db, "SELECT request FROM requests WHERE key = ?1", path_);
    Stmt insert(db, "INSERT INTO requests (key, request) VALUES (?1, ?2)", path_);
    for (const auto& [key, request] : requests) {
      find.bind(1, key);
      if (find.step()) {
        const std::string stored = find.text(0);
        find.done();
        VLBIAS_CHECK(stored == request, UsageError,
                     "{}: key '{}' is already in the store with another request; the manifest "
                     "or the spec changed under the run",
                     path_.string(), key);
        continue;
      }
      find.done();
      insert.bind(1, key).bind(2, request);
      insert.step();
      insert.done();
      ++added;
    }
    exec(db, "COMMIT", path_, false);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return added;
}

std::vector<std::string> RunStore::pending(std::size_t limit, std::size_t after) const {
  std::lock_guard lock(impl_->mutex);
  Stmt s(impl_->db.get(),
         "SELECT key FROM requests WHERE status = 0 ORDER BY seq LIMIT ?1 OFFSET ?2", path_);
  s.bind(1, static_cast<long long>(limit)).bind(2, static_cast<long long>(after));
  std::vector<std::string> keys;
  while (s.step()) keys.push_back(s.text(0));
  return keys;
}

std::vector<PendingRequest> RunStore::pending_after(std::int64_t after_seq,
                                                    std::size_t limit) const {
  std::lock_guard lock(impl_->mutex);
  Stmt s(impl_->db.get(),
         "SELECT seq, key, request FROM requests WHERE status = 0 AND seq > ?1 ORDER BY seq "
         "LIMIT ?2",
         path_);
  s.bind(1, static_cast<long long>(after_seq)).bind(2, static_cast<long long>(limit));
  std::vector<PendingRequest> page;
  while (s.step()) page.push_back({s.integer(0), s.text(1), s.text(2)});
  return page;
}

void RunStore::record_done(const std::string& key, const std::string& response, int http_status,
                           double latency_s) {
  impl_->finish(key, RequestStatus::Done, response, "", http_status, latency_s);
}

void RunStore::record_refused(const std::string& key, const std::string& response,
                              const std::string& reason, int http_status, double latency_s) {
  impl_->finish(key, RequestStatus::Refused, response, reason, http_status, latency_s);
}

void RunStore::record_failed(const std::string& key, const std::string& error, int http_status,
                             double latency_s) {
  impl_->finish(key, RequestStatus::Failed, "", error, http_status, latency_s);
}

void RunStore::record_attempt(const std::string& key, const std::string& error, int http_status,
                              double latency_s) {
  impl_->finish(key, RequestStatus::Pending, "", error, http_status, latency_s);
}

void RunStore::restore(const std::vector<RequestRecord>& records, const std::string& where) {
  std::lock_guard lock(impl_->mutex);
  sqlite3* db = impl_->db.get();
  exec(db, "BEGIN IMMEDIATE", path_, false);
  try {
    Stmt set(db,
             "UPDATE requests SET status = ?3, attempts = ?4, http_status = ?5, response = ?6, "
             "error = ?7, latency_s = ?8, updated_utc = ?9 WHERE key = ?1 AND request = ?2 AND "
             "status = 0",
             path_);
    for (const RequestRecord& r : records) {
      set.bind(1, r.key)
          .bind(2, r.request)
          .bind(3, static_cast<long long>(r.status))
          .bind(4, static_cast<long long>(r.attempts))
          .bind(5, static_cast<long long>(r.http_status))
          .bind(6, r.response)
          .bind(7, r.error)
          .bind_double(8, r.latency_s)
          .bind(9, r.updated_utc);
      set.step();
      set.done();
      if (sqlite3_changes(db) == 1) continue;
      Stmt find(db, "SELECT request, status FROM requests WHERE key = ?1", path_);
      find.bind(1, r.key);
      const bool found = find.step();
      VLBIAS_CHECK(found, InputError,
                   "{}: holds request '{}', which the job's manifest and spec do not ask for",
                   where, r.key);
      VLBIAS_CHECK(find.text(0) == r.request, InputError,
                   "{}: request '{}' differs from what the job asks now (the manifest or the spec "
                   "changed since the shard ran)",
                   where, r.key);
      VLBIAS_FAIL(InputError, "{}: request '{}' is also in another shard's store", where, r.key);
    }
    exec(db, "COMMIT", path_, false);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::size_t RunStore::retry_failed() {
  std::lock_guard lock(impl_->mutex);
  Stmt s(impl_->db.get(), "UPDATE requests SET status = 0, updated_utc = ?1 WHERE status = 3",
         path_);
  s.bind(1, utc_now());
  s.step();
  return static_cast<std::size_t>(sqlite3_changes(impl_->db.get()));
}

RequestRecord RunStore::get(const std::string& key) const {
  std::lock_guard lock(impl_->mutex);
  Stmt& s = *impl_->row_of;
  s.bind(1, key);
  if (!s.step()) {
    s.done();
    VLBIAS_FAIL(InputError, "{}: no request with key '{}'", path_.string(), key);
  }
  RequestRecord r = record_of(s);
  s.done();
  return r;
}

StoreCounts RunStore::counts() const {
  std::lock_guard lock(impl_->mutex);
  Stmt s(impl_->db.get(), "SELECT status, COUNT(*) FROM requests GROUP BY status", path_);
  StoreCounts c;
  while (s.step()) {
    const auto n = static_cast<std::size_t>(s.integer(1));
    switch (static_cast<RequestStatus>(s.integer(0))) {
      case RequestStatus::Pending:
        c.pending = n;
        break;
      case RequestStatus::Done:
        c.done = n;
        break;
      case RequestStatus::Refused:
        c.refused = n;
        break;
      case RequestStatus::Failed:
        c.failed = n;
        break;
    }
  }
  return c;
}

void RunStore::for_each(const std::function<void(const RequestRecord&)>& visit) const {
  std::lock_guard lock(impl_->mutex);
  Stmt s(
      impl_->db.get(),
      std::string("SELECT ").append(kRecordColumns).append(" FROM requests ORDER BY seq").c_str(),
      path_);
  while (s.step()) visit(record_of(s));
}

void RunStore::export_jsonl(const std::filesystem::path& out) const {
  // JSON text stays JSON in the export; anything else (too deep included) is kept as a string.
  auto as_json = [](const std::string& text) {
    if (text.empty()) return Json();
    ParsedJson parsed = try_parse_json(text);
    return parsed.ok() ? std::move(parsed.value) : Json(text);
  };
  AtomicWriter writer(out);
  for_each([&](const RequestRecord& r) {
    const Json row{{"key", r.key},
                   {"status", to_string(r.status)},
                   {"attempts", r.attempts},
                   {"http_status", r.http_status},
                   {"latency_s", r.latency_s},
                   {"request", as_json(r.request)},
                   {"response", as_json(r.response)},
                   {"error", r.error}};
    const std::string line = row.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    writer.write(line.data(), line.size());
  });
  writer.commit();
}

}  // namespace vlbias
