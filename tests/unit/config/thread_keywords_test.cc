// Thread, CPU and listener-sharding keywords: nbthread, thread-groups, thread-group, cpu-map,
// cpu-policy, the bind line's `thread` and `shards`, tune.listener.default-shards and
// noreuseport, with HAProxy's errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::Run;

Run global(const std::string& lines) { return parse("global\n" + lines); }

const std::string kTail =
    "  timeout client 1s\n  default_backend be\nbackend be\n  timeout server 1s\n"
    "  timeout connect 1s\n  server s1 127.0.0.1:80\n";

// A frontend whose first bind line is `bind_line` (line 3 of f.cfg without global lines).
Run bind(const std::string& bind_line, const std::string& global_lines = "") {
  return parse("global\n" + global_lines + "frontend fe\n  " + bind_line + "\n" + kTail);
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// ---- thread-groups, thread-group, max-threads-per-group, thread-hard-limit ----

TEST(ThreadGroups, ParsesAndLastWins) {
  auto r = global("  thread-groups 4\n  thread-groups 2\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().thread_groups, 2);
  EXPECT_TRUE(global("  thread-groups 0\n").has("parsing [f.cfg:2] : 'thread-groups' must be between 1 and 32 (got 0)."));
  EXPECT_TRUE(global("  thread-groups 33\n").contains("between 1 and 32 (got 33)"));
  EXPECT_TRUE(global("  thread-groups 2x\n").has("parsing [f.cfg:2] : passed a missing or unparsable integer value in '2x'"));
  EXPECT_TRUE(global("  thread-groups 2 3\n").contains("'thread-groups' cannot handle unexpected argument '3'."));
}

TEST(ThreadGroups, FirstGlobalSectionOnly) {
  for (std::string kw : {"thread-groups 2", "thread-group 1 1-2", "nbthread 4"}) {
    auto r = parse("frontend f\n  bind :1\nglobal\n  " + kw + "\n");
    EXPECT_FALSE(r.r.model);
    std::string name = kw.substr(0, kw.find(' '));
    EXPECT_TRUE(r.has("parsing [f.cfg:4] : '" + name + "' not allowed if a non-global section was "
                      "previously defined. This parameter must be declared in the first global section"))
        << r.all();
  }
  // max-threads-per-group is not restricted.
  EXPECT_TRUE(parse("frontend f\n  bind :1\n  timeout client 1s\nglobal\n  max-threads-per-group 8\n").r.model);
}

TEST(ThreadGroup, Ranges) {
  auto r = global("  thread-group 1 1-3 4\n  thread-group 2 5,6-8\n");
  ASSERT_TRUE(r.r.model) << r.all();
  ASSERT_EQ(r.global().thread_group_lines.size(), 2u);
  EXPECT_EQ(r.global().thread_group_lines[0].group, 1);
  EXPECT_EQ(r.global().thread_group_lines[0].threads, range(1, 4));
  EXPECT_EQ(r.global().thread_group_lines[1].threads, range(5, 8));
  EXPECT_EQ(r.global().thread_group_lines[1].loc.line, 3);
}

TEST(ThreadGroup, Case3SparseThreads) {
  auto r = global("  thread-group 1 1-3\n  thread-group 1 1,3\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'thread-group 1' assigned sparse threads, only contiguous supported."))
      << r.all();
}

TEST(ThreadGroup, RedefineAndMoveWarn) {
  auto r = global("  thread-group 1 1-4\n  thread-group 2 5-8\n  thread-group 1 1-2\n  thread-group 3 8\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'thread-group 1' was already defined at [f.cfg:2], "
                    "overriding its previous definition.")) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:5] : 'thread-group 3' : thread 8 was assigned to thread group 2, "
                    "moving it to group 3.")) << r.all();
  const auto& lines = r.global().thread_group_lines;
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].group, 2);
  EXPECT_EQ(lines[0].threads, range(5, 7));
  EXPECT_EQ(lines[1].group, 1);
  EXPECT_EQ(lines[1].threads, range(1, 2));
  EXPECT_EQ(lines[2].threads, std::vector<int>{8});
  auto twice = global("  thread-group 1 1-2 2\n");
  ASSERT_TRUE(twice.r.model);
  EXPECT_TRUE(twice.contains("thread 2 is assigned twice on the same line"));
}

TEST(ThreadGroup, Errors) {
  EXPECT_TRUE(global("  thread-group 1\n").contains("'thread-group' expects a thread group number"));
  EXPECT_TRUE(global("  thread-group 33 1\n").contains("invalid thread group number '33', expected 1..32."));
  EXPECT_TRUE(global("  thread-group 1 0\n").contains("invalid thread range '0'"));
  EXPECT_TRUE(global("  thread-group 1 4-2\n").contains("invalid thread range '4-2'"));
  EXPECT_TRUE(global("  thread-group 1 1-1025\n").contains("invalid thread range '1-1025'"));
  EXPECT_TRUE(global("  thread-group 1 a\n").contains("invalid thread range 'a', expected N or N-M."));
}

TEST(MaxThreadsPerGroupAndHardLimit, Parse) {
  auto r = global("  max-threads-per-group 8\n  thread-hard-limit 100\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().max_threads_per_group, 8);
  EXPECT_EQ(r.global().thread_hard_limit, 100);
  EXPECT_TRUE(global("  max-threads-per-group 65\n").has("parsing [f.cfg:2] : 'max-threads-per-group' must be between 1 and 64 (got 65)."));
  EXPECT_TRUE(global("  max-threads-per-group 0\n").contains("between 1 and 64"));
  EXPECT_TRUE(global("  thread-hard-limit 0\n").contains("'thread-hard-limit' must be between 1 and 1024 (got 0)."));
  EXPECT_TRUE(global("  thread-hard-limit x\n").contains("unparsable integer value in 'x'"));
}

// ---- cpu-map ----

TEST(CpuMap, PlainForms) {
  auto r = global("  cpu-map 1/all 0-3\n  cpu-map 2 4,6 8-9\n  cpu-map odd/2-3 10\n  cpu-map 1/3- 1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& m = r.global().cpu_maps;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_FALSE(m[0].automatic);
  EXPECT_EQ(m[0].groups, std::vector<int>{1});
  EXPECT_EQ(m[0].threads, range(1, 64));
  EXPECT_EQ(m[0].cpus, range(0, 3));
  EXPECT_TRUE(m[1].threads.empty());
  EXPECT_EQ(m[1].cpus, (std::vector<int>{4, 6, 8, 9}));
  EXPECT_EQ(m[2].groups.front(), 1);
  EXPECT_EQ(m[2].groups[1], 3);
  EXPECT_EQ(m[2].threads, (std::vector<int>{2, 3}));
  EXPECT_EQ(m[3].threads, range(3, 64));
  EXPECT_EQ(m[3].loc.line, 5);
}

TEST(CpuMap, Case12Auto) {
  auto r = global("  cpu-map auto:1/1-4 0-3\n  cpu-map auto:1-2 4 5\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& m = r.global().cpu_maps;
  EXPECT_TRUE(m[0].automatic);
  EXPECT_TRUE(m[0].thread_range);
  EXPECT_FALSE(m[0].group_range);
  EXPECT_EQ(m[0].threads, range(1, 4));
  EXPECT_TRUE(m[1].group_range);
  EXPECT_EQ(m[1].cpus, (std::vector<int>{4, 5}));
  auto bad = global("  cpu-map auto:1/1 0-3\n");
  EXPECT_FALSE(bad.r.model);
  EXPECT_TRUE(bad.has("parsing [f.cfg:2] : 'cpu-map' : the thread set 'auto:1/1' (1) and the CPU set (4) "
                      "must have the same size to be bound automatically.")) << bad.all();
  EXPECT_TRUE(global("  cpu-map auto:1/1-4 0-2\n").contains("must have the same size"));
  EXPECT_TRUE(global("  cpu-map auto:1 0-3\n").contains("must have the same size"));
  EXPECT_TRUE(global("  cpu-map auto:1-2/1-2 0-3\n").contains("'auto:' supports either a single thread group"));
}

TEST(CpuMap, Errors) {
  EXPECT_TRUE(global("  cpu-map 1\n").contains("'cpu-map' expects [auto:]<thread-group>[/<thread-set>] and a CPU set."));
  EXPECT_TRUE(global("  cpu-map x 0\n").contains("'cpu-map' : invalid thread group set 'x'"));
  EXPECT_TRUE(global("  cpu-map 1/odd-3 0\n").contains("'odd' cannot be followed by a range in 'odd-3'"));
  EXPECT_TRUE(global("  cpu-map 1/65 0\n").contains("out of range (1..64)"));
  EXPECT_TRUE(global("  cpu-map 1 0-a\n").contains("invalid CPU set '0-a'"));
  EXPECT_TRUE(global("  cpu-map 1 3-1\n").contains("invalid CPU range '3-1'"));
  EXPECT_TRUE(global("  cpu-map 1 5000\n").contains("out of range (0..4095)"));
}

// ---- cpu-policy and listener tunables ----

TEST(CpuPolicy, Values) {
  using P = GlobalConfig::CpuPolicy;
  EXPECT_EQ(global("").global().cpu_policy, P::kDefault);
  EXPECT_EQ(global("  cpu-policy none\n").global().cpu_policy, P::kNone);
  EXPECT_EQ(global("  cpu-policy group-by-ccx\n").global().cpu_policy, P::kGroupByCcx);
  EXPECT_EQ(global("  cpu-policy performance\n").global().cpu_policy, P::kPerformance);
  EXPECT_TRUE(global("  cpu-policy efficiency\n").has(
      "parsing [f.cfg:2] : 'cpu-policy efficiency' is not supported by sluice yet (supported: 'none', "
      "'group-by-ccx' and 'performance')."));
  EXPECT_TRUE(global("  cpu-policy resource\n").contains("'cpu-policy resource' is not supported by sluice yet"));
  EXPECT_TRUE(global("  cpu-policy fast\n").contains("'cpu-policy' expects 'none', 'group-by-ccx' or 'performance' (got 'fast')."));
  EXPECT_TRUE(global("  cpu-policy performance threads-per-core 1\n").contains("'threads-per-core' is not supported by sluice yet."));
}

TEST(ListenerTunables, Values) {
  auto r = global("  tune.listener.multi-queue fair\n  tune.listener.reuseport-steering cpu\n  noreuseport\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().multi_queue, GlobalConfig::MultiQueue::kFair);
  EXPECT_EQ(r.global().reuseport_steering, GlobalConfig::Steering::kCpu);
  EXPECT_TRUE(r.global().noreuseport);
  auto d = global("");
  EXPECT_EQ(d.global().multi_queue, GlobalConfig::MultiQueue::kOn);
  EXPECT_EQ(d.global().reuseport_steering, GlobalConfig::Steering::kHash);
  EXPECT_FALSE(d.global().noreuseport);
  EXPECT_EQ(global("  tune.listener.multi-queue off\n").global().multi_queue, GlobalConfig::MultiQueue::kOff);
  EXPECT_TRUE(global("  tune.listener.multi-queue yes\n").has(
      "parsing [f.cfg:2] : 'tune.listener.multi-queue' expects 'on', 'fair' or 'off' but got 'yes'."));
  EXPECT_TRUE(global("  tune.listener.reuseport-steering rr\n").contains("expects 'hash' or 'cpu' but got 'rr'."));
  EXPECT_TRUE(global("  noreuseport 1\n").contains("'noreuseport' cannot handle unexpected argument '1'."));
}

TEST(DefaultShards, Case28Values) {
  using K = ShardsConfig::Kind;
  EXPECT_EQ(global("").global().default_shards.kind, K::kByGroup);
  EXPECT_EQ(global("  tune.listener.default-shards by-process\n").global().default_shards.kind, K::kByProcess);
  EXPECT_EQ(global("  tune.listener.default-shards by-thread\n").global().default_shards.kind, K::kByThread);
  auto bad = global("  tune.listener.default-shards per-cpu\n");
  EXPECT_FALSE(bad.r.model);
  EXPECT_TRUE(bad.has("parsing [f.cfg:2] : 'tune.listener.default-shards' expects either 'by-process', "
                      "'by-group', or 'by-thread' but got 'per-cpu'.")) << bad.all();
}

TEST(DefaultShards, Case29CopiedWhenTheBindLineIsRead) {
  auto r = parse("global\n  tune.listener.default-shards by-process\n"
                 "frontend fe\n  bind :80\n" + kTail +
                 "global\n  tune.listener.default-shards by-thread\n"
                 "frontend fe2\n  bind :81\n  bind :82 shards 2\n  timeout client 1s\n  default_backend be\n");
  ASSERT_TRUE(r.r.model) << r.all();
  using K = ShardsConfig::Kind;
  const auto& px = r.r.model->proxies;
  ASSERT_EQ(px.size(), 3u);
  EXPECT_EQ(px[0].binds[0].shards.kind, K::kByProcess);
  EXPECT_EQ(px[2].binds[0].shards.kind, K::kByThread);
  EXPECT_EQ(px[2].binds[1].shards.kind, K::kNumber);
  EXPECT_EQ(px[2].binds[1].shards.number, 2);
  EXPECT_EQ(r.global().default_shards.kind, K::kByThread);
  // Without the tune line, bind lines get by-group.
  auto d = bind("bind :80");
  ASSERT_TRUE(d.r.model) << d.all();
  EXPECT_EQ(d.r.model->proxies[0].binds[0].shards.kind, K::kByGroup);
}

// ---- bind options ----

TEST(BindShards, Case28) {
  using K = ShardsConfig::Kind;
  auto r = bind("bind :80 shards by-thread");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].binds[0].shards.kind, K::kByThread);
  EXPECT_EQ(bind("bind :80 shards by-group", "  tune.listener.default-shards by-thread\n")
                .r.model->proxies[0].binds[0].shards.kind, K::kByGroup);
  EXPECT_EQ(bind("bind :80 shards 1024").r.model->proxies[0].binds[0].shards.number, 1024);
  auto zero = bind("bind :80 shards 0");
  EXPECT_FALSE(zero.r.model);
  EXPECT_TRUE(zero.has("parsing [f.cfg:3] : 'bind :80' : 'shards' : invalid value 0, allowed range is "
                       "1..1024 or 'by-thread' or 'by-group'.")) << zero.all();
  EXPECT_TRUE(bind("bind :80 shards 1025").contains("invalid value 1025, allowed range is 1..1024"));
  EXPECT_TRUE(bind("bind :80 shards foo").contains("'shards' : invalid value 'foo', allowed range is 1..1024 "
                                                   "or 'by-thread' or 'by-group'."));
  EXPECT_TRUE(bind("bind :80 shards 4x").contains("invalid value '4x'"));
  EXPECT_TRUE(bind("bind :80 shards").contains("'shards' : missing value."));
}

TEST(BindId, Values) {
  EXPECT_EQ(bind("bind :80 id 7").r.model->proxies[0].binds[0].id, 7);
  EXPECT_EQ(bind("bind :80").r.model->proxies[0].binds[0].id, 0);
  EXPECT_TRUE(bind("bind :80 id 0").contains("'bind :80' : 'id' : custom id has to be > 0."));
  EXPECT_TRUE(bind("bind :80 id x").contains("'id' : expects an integer argument, got 'x'."));
  EXPECT_TRUE(bind("bind :80 id").contains("'id' : expects an integer argument."));
}

// Spec 7 (bind): an id is unique in the proxy and names a single socket; shards are clones
// that take the next ids, so they do not count as more sockets.
TEST(BindId, SingleSocketAndUnique) {
  auto list = bind("bind :80,:81 id 5");
  EXPECT_FALSE(list.r.model);
  EXPECT_TRUE(list.has("parsing [f.cfg:3] : 'bind :80,:81' : 'id' can only be used with a single socket"))
      << list.all();
  EXPECT_TRUE(bind("bind :8000-8001 id 5").contains("'id' can only be used with a single socket"));
  auto sharded = bind("bind :80 shards 4 id 5");
  ASSERT_TRUE(sharded.r.model) << sharded.all();
  EXPECT_EQ(sharded.r.model->proxies[0].binds[0].id, 5);
  EXPECT_TRUE(bind("bind :80,:81 name x").r.model);
  auto dup = bind("bind :80 id 5\n  bind :81\n  bind :82 id 5");
  EXPECT_FALSE(dup.r.model);
  EXPECT_TRUE(dup.has("parsing [f.cfg:5] : 'bind :82' : 'id' : custom id 5 already used at f.cfg:3 "
                      "('bind :80')"))
      << dup.all();
  // Unique within one proxy only.
  auto other = parse("frontend a\n  bind :80 id 5\n  timeout client 1s\nfrontend b\n  bind :81 id 5\n"
                     "  timeout client 1s\n");
  EXPECT_TRUE(other.r.model) << other.all();
}

TEST(BindThread, AbsoluteAndRelative) {
  auto r = bind("bind :80 thread 1,4-5 thread 8- name x");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = r.r.model->proxies[0].binds[0];
  EXPECT_EQ(b.args_text, "bind :80 thread 1,4-5 thread 8- name x");
  EXPECT_EQ(b.name, "x");
  ASSERT_EQ(b.threads.size(), 3u);
  EXPECT_FALSE(b.threads[0].relative);
  EXPECT_EQ(b.threads[0].ids, std::vector<int>{1});
  EXPECT_EQ(b.threads[1].ids, (std::vector<int>{4, 5}));
  EXPECT_EQ(b.threads[2].ids, range(8, 1024));

  auto rel = bind("bind :80 thread 1/1-4,1/8-10,2/1 thread 3/odd");
  ASSERT_TRUE(rel.r.model) << rel.all();
  const auto& t = rel.r.model->proxies[0].binds[0].threads;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t[0].relative);
  EXPECT_EQ(t[0].group, 1);
  EXPECT_EQ(t[1].ids, range(8, 10));
  EXPECT_EQ(t[2].group, 2);
  EXPECT_EQ(t[2].ids, std::vector<int>{1});
  EXPECT_EQ(t[3].group, 3);
  EXPECT_EQ(t[3].ids.size(), 32u);
  EXPECT_EQ(t[3].ids[1], 3);
}

TEST(BindThread, Case10SpecialForms) {
  auto all = bind("bind :80 thread all").r.model->proxies[0].binds[0].threads;
  auto dash = bind("bind :80 thread -").r.model->proxies[0].binds[0].threads;
  ASSERT_EQ(dash.size(), 1u);
  EXPECT_EQ(dash[0].ids, range(1, 1024));
  EXPECT_EQ(dash[0].ids, all[0].ids);
  EXPECT_EQ(bind("bind :80 thread -3").r.model->proxies[0].binds[0].threads[0].ids, range(1, 3));
  EXPECT_EQ(bind("bind :80 thread 2/-").r.model->proxies[0].binds[0].threads[0].ids, range(1, 64));
  auto even = bind("bind :80 thread even").r.model->proxies[0].binds[0].threads[0].ids;
  EXPECT_EQ(even.size(), 512u);
  EXPECT_EQ(even.front(), 2);
}

TEST(BindThread, Case10Errors) {
  auto mix = bind("bind :80 thread 1/1-4,8-10");
  EXPECT_FALSE(mix.r.model);
  EXPECT_TRUE(mix.contains("parsing [f.cfg:3] : 'bind :80' : 'thread' : cannot mix absolute and relative "
                           "thread numbers in '1/1-4,8-10'")) << mix.all();
  EXPECT_TRUE(bind("bind :80 thread 1-4,2/1").contains("cannot mix absolute and relative"));
  EXPECT_TRUE(bind("bind :80 thread 1-4 thread 2/1").contains("cannot mix absolute and relative thread numbers "
                                                              "on the same line"));
  EXPECT_TRUE(bind("bind :80 thread 1/odd-4").contains("'thread' : 'odd' cannot be followed by a range in 'odd-4'."));
  EXPECT_TRUE(bind("bind :80 thread 1x").contains("'thread' : invalid character 'x' in '1x'."));
  EXPECT_TRUE(bind("bind :80 thread /1-4").contains("missing thread group number before '/' in '/1-4'"));
  EXPECT_TRUE(bind("bind :80 thread 33/1").contains("thread group number in '33/1' is out of range (1..32)"));
  EXPECT_TRUE(bind("bind :80 thread 1/65").contains("value 65 is out of range (1..64)"));
  EXPECT_TRUE(bind("bind :80 thread 1025").contains("value 1025 is out of range (1..1024)"));
  EXPECT_TRUE(bind("bind :80 thread 0").contains("value 0 is out of range"));
  EXPECT_TRUE(bind("bind :80 thread 5-3").contains("invalid range '5-3'"));
  EXPECT_TRUE(bind("bind :80 thread 1,,2").contains("empty thread set in '1,,2'"));
  EXPECT_TRUE(bind("bind :80 thread").contains("'thread' : missing thread set"));
}

TEST(StatsSocket, NeverSharded) {
  auto r = global("  stats socket /tmp/sluice.sock shards 2\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("'stats socket' : 'shards' is not accepted: the stats socket is never sharded."))
      << r.all();
}

}  // namespace
}  // namespace sluice::config
