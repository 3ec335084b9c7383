// Output formats of the data commands against a fake process: show info, show stat, show
// servers state, show backend, show activity (spec sections 2-5 and the section 9 checklist).
#include <gtest/gtest.h>

#include <cctype>
#include <cctype>
#include <sstream>
#include <string>

#include "base/version.h"
#include "cli/builtin.h"
#include "cli/cli.h"

namespace sluice::cli {
namespace {

// fe_http (frontend, id 2), be_app (backend, id 3, s1 checked and UP, s2 in maintenance), and
// ls_tcp (listen, id 4, one listener row and one unchecked server).
class FakeStats : public stats::StatsSource {
 public:
  int nbthread = 4;

  stats::ProcessSnapshot process() const override {
    stats::ProcessSnapshot p;
    p.pid = 4242;
    p.nbthread = nbthread;
    p.uptime_s = 103;
    p.start_time_s = 1700000000;
    p.ulimit_n = 1048576;
    p.maxsock = 100;
    p.maxconn = 50;
    p.hard_maxconn = 50;
    p.curr_conns = 3;
    p.cum_conns = 21;
    p.cum_req = 7;
    p.node = "host1";
    p.idle_pct = 99;
    return p;
  }

  std::vector<stats::ProxySnapshot> proxies() const override {
    std::vector<stats::ProxySnapshot> v;
    stats::ProxySnapshot fe;
    fe.name = "fe_http";
    fe.id = 2;
    fe.is_frontend = true;
    fe.mode = "http";
    fe.frontend_status = "OPEN";
    fe.maxconn = 1000;
    fe.frontend.stot = 21;
    fe.frontend.bin = 82;
    fe.frontend.req_tot = 21;
    fe.frontend.hrsp_2xx = 20;
    fe.frontend.hrsp_5xx = 1;
    v.push_back(fe);

    stats::ProxySnapshot be;
    be.name = "be_app";
    be.id = 3;
    be.is_backend = true;
    be.mode = "http";
    be.algo = "roundrobin";
    be.fullconn = 100;
    be.backend.stot = 21;
    be.backend.last_sess_s = 5;
    be.backend_lastchg_s = 8;
    stats::ServerSnapshot s1;
    s1.name = "s1";
    s1.id = 1;
    s1.addr = "127.0.0.1:18081";
    s1.host = "127.0.0.1";
    s1.port = 18081;
    s1.status = "UP";
    s1.check_enabled = true;
    s1.check_configured = true;
    s1.check_status = s1.check_last_status = "L7OK";
    s1.check_code = 200;
    s1.check_duration_ms = 1;
    s1.check_rise = 2;
    s1.check_fall = 3;
    s1.check_health = s1.check_last_health = 4;
    s1.last_chk = "OK, \"fine\"";
    s1.lastchg_s = 359;
    s1.chkdown = 2;
    s1.downtime_s = 4;
    s1.c.stot = 1;
    s1.c.bin = 82;
    s1.c.bout = 1493;
    s1.c.smax = 1;
    s1.c.lbtot = 1;
    s1.c.last_sess_s = 5;
    be.servers.push_back(s1);
    stats::ServerSnapshot s2;
    s2.name = "s2";
    s2.id = 2;
    s2.addr = "127.0.0.1:18082";
    s2.host = "127.0.0.1";
    s2.port = 18082;
    s2.status = "MAINT";
    s2.op_state = 0;
    s2.admin_state = 1;
    s2.check_enabled = true;
    s2.check_configured = true;
    s2.check_status = s2.check_last_status = "L4CON";
    s2.maxconn = 30;
    be.servers.push_back(s2);
    v.push_back(be);

    stats::ProxySnapshot ls;
    ls.name = "ls_tcp";
    ls.id = 4;
    ls.is_frontend = ls.is_backend = true;
    ls.mode = "tcp";
    ls.maxconn = 200;
    stats::ListenerSnapshot li;
    li.name = "sock-1";
    li.id = 1;
    li.addr = "127.0.0.1:9000";
    li.proto = "tcpv4";
    li.status = "OPEN";
    ls.listeners.push_back(li);
    stats::ServerSnapshot t1;
    t1.name = "t1";
    t1.id = 1;
    t1.addr = "[::1]:18084";
    t1.host = "::1";
    t1.port = 18084;
    t1.status = "no check";
    t1.lastchg_s = 6;
    ls.servers.push_back(t1);
    v.push_back(ls);
    return v;
  }

  stats::ActivitySnapshot activity(int current_thread) const override {
    stats::ActivitySnapshot a;
    a.current_thread = current_thread;
    a.date_now_us = 1700000000123456;
    a.uptime_now_us = 103000042;
    std::vector<uint64_t> ctx(static_cast<std::size_t>(nbthread)), avg(ctx.size());
    for (std::size_t i = 0; i < ctx.size(); ++i) {
      ctx[i] = 10 * (i + 1);
      avg[i] = i + 1;   // 1 2 3 4 -> rounded average 3 (2.5 rounds up)
    }
    a.metrics = {{"ctxsw", ctx}, {"avg_loop_us", avg}};
    return a;
  }
};

FakeStats g_stats;

std::string ask(std::string_view line, Level level = Level::kAdmin, int thread = 2) {
  CliSession s(level, &g_stats, thread);
  std::string out;
  s.feed(std::string(line) + "\n", &out);
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  // The empty line that ends every answer is not part of the content.
  if (!v.empty() && v.back().empty()) v.pop_back();
  return v;
}

std::vector<std::string> csv_fields(const std::string& line) {
  // Splits at commas outside quotes; fields keep their quotes as sent.
  std::vector<std::string> v;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return v;   // the text after the last comma (nothing) is dropped
}

// Hand-written matchers for the checklist's patterns: <regex> trips GCC 12's
// maybe-uninitialized warning in the -Werror sanitizer build.
bool all_of_set(std::string_view s, std::string_view set) {
  return !s.empty() && s.find_first_not_of(set) == std::string_view::npos;
}
constexpr std::string_view kDigits = "0123456789";
constexpr std::string_view kWord =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

// ^[A-Za-z_ -]+: .*$
bool is_info_line(std::string_view l) {
  auto p = l.find(": ");
  return p != std::string_view::npos &&
         all_of_set(l.substr(0, p), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ -");
}

// "<tags>:<type>:" with tags from the spec's letter sets when strict.
bool tags_and_type(std::string_view rest, bool strict) {
  if (rest.size() < 5 || rest[4] != ':') return false;
  if (strict) {
    if (std::string_view("MSKCP").find(rest[0]) == std::string_view::npos) return false;
    if (!std::isalpha(static_cast<unsigned char>(rest[1]))) return false;
    if (std::string_view("PSsC").find(rest[2]) == std::string_view::npos) return false;
    if (std::string_view("VP").find(rest[3]) == std::string_view::npos) return false;
  }
  rest.remove_prefix(5);
  auto c = rest.find(':');
  if (c == std::string_view::npos) return false;
  auto type = rest.substr(0, c);
  if (!strict) return all_of_set(type, kWord);
  return type == "u32" || type == "u64" || type == "s32" || type == "s64" || type == "str" ||
         type == "flt";
}

// ^\d+\.\w[^.]*\.1:[MSKCP][A-Za-z][PSsC][VP]:(u32|u64|s32|s64|str|flt):
bool is_typed_info_line(std::string_view l) {
  auto d = l.find('.');
  if (d == std::string_view::npos || !all_of_set(l.substr(0, d), kDigits)) return false;
  l.remove_prefix(d + 1);
  auto e = l.find(".1:");
  if (e == std::string_view::npos || e == 0) return false;
  if (kWord.find(l[0]) == std::string_view::npos) return false;
  if (l.substr(0, e).find('.') != std::string_view::npos) return false;
  return tags_and_type(l.substr(e + 3), true);
}

// ^[FBLS]\.\d+\.\d+\.\d+\.\w+\.1:....:\w+:
bool is_typed_stat_line(std::string_view l) {
  if (l.size() < 2 || std::string_view("FBLS").find(l[0]) == std::string_view::npos ||
      l[1] != '.')
    return false;
  l.remove_prefix(2);
  for (int i = 0; i < 3; ++i) {
    auto d = l.find('.');
    if (d == std::string_view::npos || !all_of_set(l.substr(0, d), kDigits)) return false;
    l.remove_prefix(d + 1);
  }
  auto e = l.find(".1:");
  if (e == std::string_view::npos || !all_of_set(l.substr(0, e), kWord)) return false;
  return tags_and_type(l.substr(e + 3), false);
}

TEST(cliShowVersion, PrintsVersion) { EXPECT_EQ(ask("show version"), std::string(base::kVersion) + "\n\n"); }

TEST(cliEcho, JoinsWords) {
  EXPECT_EQ(ask("echo   hello    world"), "hello world\n\n");
  EXPECT_EQ(ask("echo"), "\n");
}

TEST(cliShowInfo, PlainFormat) {                            // checklist 1
  auto out = ask("show info");
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.substr(out.size() - 2), "\n\n");
  auto lines = lines_of(out.substr(0, out.size() - 1));
  for (const auto& l : lines) EXPECT_TRUE(is_info_line(l)) << l;
  EXPECT_EQ(lines[0], "Name: sluice");
  EXPECT_EQ(lines[1], std::string("Version: ") + base::kVersion);
  EXPECT_EQ(lines[2], std::string("Release_date: ") + base::kReleaseDate);
  EXPECT_EQ(lines[3], "Nbthread: 4");
  EXPECT_EQ(lines[4], "Nbproc: 1");
  EXPECT_EQ(lines[5], "Process_num: 1");
  EXPECT_EQ(lines[6], "Pid: 4242");
  EXPECT_EQ(lines[7], "Uptime: 0d 0h01m43s");
  EXPECT_EQ(lines[8], "Uptime_sec: 103");
  // The starred fields tools read, in table order.
  std::vector<std::string> starred = {"Ulimit-n", "Maxsock", "Maxconn", "Hard_maxconn",
                                      "CurrConns", "CumConns", "CumReq", "MaxSslConns",
                                      "CurrSslConns", "CumSslConns", "Maxpipes", "PipesUsed",
                                      "PipesFree", "ConnRate", "ConnRateLimit", "MaxConnRate",
                                      "SessRate", "SessRateLimit", "MaxSessRate", "SslRate",
                                      "SslRateLimit", "MaxSslRate", "SslFrontendKeyRate",
                                      "SslFrontendMaxKeyRate", "SslFrontendSessionReuse_pct",
                                      "SslBackendKeyRate", "SslBackendMaxKeyRate",
                                      "SslCacheLookups", "SslCacheMisses", "Tasks",
                                      "Run_queue", "Idle_pct", "node"};
  std::size_t at = 0;
  for (const auto& name : starred) {
    auto it = std::find_if(lines.begin() + static_cast<long>(at), lines.end(),
                           [&](const std::string& l) { return l.rfind(name + ": ", 0) == 0; });
    ASSERT_NE(it, lines.end()) << name;
    at = static_cast<std::size_t>(it - lines.begin());
  }
  EXPECT_NE(out.find("\nCurrConns: 3\n"), std::string::npos);
  EXPECT_NE(out.find("\nnode: host1\n"), std::string::npos);
  // description is absent when not configured.
  EXPECT_EQ(out.find("description"), std::string::npos);
}

TEST(cliShowInfo, Typed) {                                  // checklist 34
  auto out = ask("show info typed");
  auto lines = lines_of(out.substr(0, out.size() - 1));
  for (const auto& l : lines) EXPECT_TRUE(is_typed_info_line(l)) << l;
  EXPECT_FALSE(is_typed_info_line("0.Name.1:XOSV:str:x"));
  EXPECT_FALSE(is_typed_info_line("x.Name.1:POSV:str:x"));
  EXPECT_EQ(lines[0], "0.Name.1:POSV:str:sluice");
  EXPECT_NE(out.find("\n49.Idle_pct.1:MaPV:u32:99\n"), std::string::npos);
  EXPECT_NE(out.find("\n50.node.1:COSV:str:host1\n"), std::string::npos);
}

TEST(cliShowInfo, JsonAndDesc) {
  auto out = ask("show info json");
  EXPECT_EQ(out.rfind(R"([{"field":{"pos":0,"name":"Name"},"processNum":1,"tags":{"origin":"Product","nature":"Output","scope":"Service"},"value":{"type":"str","value":"sluice"}},)", 0), 0u) << out;
  EXPECT_NE(out.find(R"({"field":{"pos":6,"name":"Pid"},"processNum":1,"tags":{"origin":"Status","nature":"Gauge","scope":"Process"},"value":{"type":"u32","value":4242}})"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 3), "]\n\n");
  auto desc = ask("show info desc");
  EXPECT_EQ(desc.rfind("Name: sluice:\"Product name\"\n", 0), 0u);
}

TEST(cliShowStat, HeaderAndRowsHaveSameColumns) {           // checklist 3
  auto out = ask("show stat");
  EXPECT_EQ(out.substr(out.size() - 2), "\n\n");
  auto lines = lines_of(out.substr(0, out.size() - 1));
  ASSERT_EQ(lines.size(), 1u + 1 + 3 + 1 + 1 + 1 + 1);   // header, fe, be(s1,s2,B), ls(F,L,t1,B)
  const auto& h = lines[0];
  EXPECT_EQ(h.rfind("# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,", 0), 0u);
  EXPECT_NE(h.find(",resbin,resbout,cache_hint_hits,-,"), std::string::npos);
  auto header = csv_fields(h.substr(2));
  ASSERT_EQ(header.size(), 120u);
  EXPECT_EQ(header[17], "status");
  EXPECT_EQ(header[73], "addr");
  EXPECT_EQ(header[102], "agg_check_status");
  EXPECT_EQ(header[118], "cache_hint_hits");
  EXPECT_EQ(header[119], "-");
  for (const auto& l : lines) {
    EXPECT_EQ(l.back(), ',') << l;
    EXPECT_EQ(csv_fields(l.substr(l[0] == '#' ? 2 : 0)).size(), 120u) << l;
  }
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(csv_fields(lines[i])[119], "-");
  std::vector<std::string> order;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto f = csv_fields(lines[i]);
    order.push_back(f[0] + "/" + f[1]);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"fe_http/FRONTEND", "be_app/s1", "be_app/s2",
                                             "be_app/BACKEND", "ls_tcp/FRONTEND",
                                             "ls_tcp/sock-1", "ls_tcp/t1", "ls_tcp/BACKEND"}));
}

TEST(cliShowStat, ExactRowsColumns0To35) {
  auto lines = lines_of(ask("show stat"));
  auto first36 = [](const std::string& l) {
    std::size_t pos = 0;
    for (int i = 0; i < 36; ++i) pos = l.find(',', pos) + 1;
    return l.substr(0, pos - 1);
  };
  EXPECT_EQ(first36(lines[1]), "fe_http,FRONTEND,,,0,0,1000,21,82,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,0,0,0");
  EXPECT_EQ(first36(lines[2]), "be_app,s1,0,0,0,1,,1,82,1493,,0,,0,0,0,0,UP,1,1,0,0,2,359,4,,1,3,1,,1,,2,0,,0");
  EXPECT_EQ(first36(lines[3]), "be_app,s2,0,0,0,0,30,0,0,0,,0,,0,0,0,0,MAINT,1,1,0,0,0,0,0,,1,3,2,,0,,2,0,,0");
  // Only s1 is usable: weight 1, act 1.
  EXPECT_EQ(first36(lines[4]), "be_app,BACKEND,0,0,0,0,100,21,0,0,0,0,,0,0,0,0,UP,1,1,0,,0,8,0,,1,3,0,,0,,1,0,,0");
  EXPECT_EQ(first36(lines[6]), "ls_tcp,sock-1,,,0,0,0,0,0,0,0,0,0,,,,,OPEN,,,,,,,,,1,4,1,,,,3,,,");
  EXPECT_EQ(first36(lines[7]), "ls_tcp,t1,0,0,0,0,,0,0,0,,0,,0,0,0,0,no check,1,1,0,,,6,,,1,4,1,,0,,2,0,,0");
}

TEST(cliShowStat, CheckFieldsAndHttpColumns) {
  auto lines = lines_of(ask("show stat"));
  auto s1 = csv_fields(lines[2]);
  EXPECT_EQ(s1[36], "L7OK");
  EXPECT_EQ(s1[37], "200");
  EXPECT_EQ(s1[38], "1");
  EXPECT_EQ(s1[56], "\"OK, \"\"fine\"\"\"");   // CSV-escaped (split here at the inner comma)
  // s2 is in maintenance: every check field is empty.
  auto s2 = csv_fields(lines[3]);
  for (int i : {36, 37, 38, 56, 65, 67, 68, 69}) EXPECT_EQ(s2[static_cast<std::size_t>(i)], "") << i;
  auto fe = csv_fields(lines[1]);
  EXPECT_EQ(fe[40], "20");     // hrsp_2xx, HTTP frontend
  EXPECT_EQ(fe[48], "21");     // req_tot
  auto t1 = csv_fields(lines[7]);
  EXPECT_EQ(t1[40], "");       // TCP: HTTP columns empty
  EXPECT_EQ(t1[75], "tcp");
  auto li = csv_fields(lines[6]);
  EXPECT_EQ(li[112], "tcpv4");
  EXPECT_EQ(li[73], "127.0.0.1:9000");
  auto be = csv_fields(lines[4]);
  EXPECT_EQ(be[76], "roundrobin");
  EXPECT_EQ(be[100], "0");
}

TEST(cliShowStat, UserLevelHidesLegends) {                  // checklist 4
  auto admin = lines_of(ask("show stat"));
  auto user = lines_of(ask("show stat", Level::kUser));
  ASSERT_EQ(admin.size(), user.size());
  for (std::size_t i = 1; i < user.size(); ++i) {
    auto a = csv_fields(admin[i]);
    auto u = csv_fields(user[i]);
    ASSERT_EQ(a.size(), u.size());
    for (std::size_t c = 0; c < u.size(); ++c) {
      if (c == 73 || c == 74 || c == 76) {
        EXPECT_EQ(u[c], "") << i << ":" << c;
      } else {
        EXPECT_EQ(u[c], a[c]) << i << ":" << c;
      }
    }
  }
  EXPECT_EQ(csv_fields(admin[2])[73], "127.0.0.1:18081");
}

TEST(cliShowStat, Filters) {                                // checklists 5 and 6
  auto servers = lines_of(ask("show stat be_app 4 -1"));
  ASSERT_EQ(servers.size(), 3u);
  EXPECT_EQ(csv_fields(servers[1])[1], "s1");
  EXPECT_EQ(csv_fields(servers[2])[1], "s2");
  auto backend = lines_of(ask("show stat be_app 2 -1"));
  ASSERT_EQ(backend.size(), 2u);
  EXPECT_EQ(csv_fields(backend[1])[1], "BACKEND");
  auto by_iid = lines_of(ask("show stat 3 4 2"));
  ASSERT_EQ(by_iid.size(), 2u);
  EXPECT_EQ(csv_fields(by_iid[1])[1], "s2");
  auto listeners = lines_of(ask("show stat -1 8 -1"));
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(csv_fields(listeners[1])[32], "3");
  EXPECT_EQ(ask("show stat nope 1 1"), "No such proxy.\n\n");
  EXPECT_EQ(ask("show stat 0 1 1"), "No such proxy.\n\n");
  EXPECT_EQ(lines_of(ask("show stat 99 -1 -1")).size(), 1u);   // header alone
  EXPECT_EQ(lines_of(ask("show stat be_app")).size(), 9u);      // not a filter: full dump
  EXPECT_EQ(ask("show stat domain foo"), "Invalid statistics domain.\n\n");
  EXPECT_EQ(lines_of(ask("show stat domain proxy be_app 2 -1")).size(), 2u);
}

TEST(cliShowStat, UpAndNoMaint) {                           // checklist 8
  auto up = lines_of(ask("show stat be_app -1 -1 up"));
  ASSERT_EQ(up.size(), 3u);
  EXPECT_EQ(csv_fields(up[1])[1], "s1");
  EXPECT_EQ(csv_fields(up[2])[17], "UP (1/2)");
  auto nm = lines_of(ask("show stat no-maint"));
  EXPECT_EQ(nm.size(), 8u);
}

TEST(cliShowStat, Typed) {                                  // checklist 35
  auto out = ask("show stat typed");
  auto lines = lines_of(out.substr(0, out.size() - 1));
  for (const auto& l : lines) EXPECT_TRUE(is_typed_stat_line(l)) << l;
  EXPECT_FALSE(is_typed_stat_line("X.2.0.7.stot.1:MCPP:u64:21"));
  EXPECT_NE(out.find("F.2.0.7.stot.1:MCPP:u64:21\n"), std::string::npos);
  EXPECT_NE(out.find("S.3.1.17.status.1:SGPV:str:UP\n"), std::string::npos);
  EXPECT_EQ(out.find(".-."), std::string::npos);
  // Empty fields are omitted.
  EXPECT_EQ(out.find("F.2.0.2.qcur"), std::string::npos);
  auto filtered = ask("show stat be_app 2 -1 typed");
  EXPECT_EQ(filtered.rfind("B.3.0.0.pxname.1:KNSV:str:be_app\n", 0), 0u);
}

TEST(cliShowStat, Json) {
  auto out = ask("show stat be_app 2 -1 json");
  EXPECT_EQ(out.rfind(R"([[{"objType":"Backend","proxyId":3,"id":0,"field":{"pos":0,"name":"pxname"},"processNum":1,"tags":{"origin":"Key","nature":"Name","scope":"Service"},"value":{"type":"str","value":"be_app"}},)", 0), 0u) << out;
  EXPECT_EQ(out.substr(out.size() - 4), "]]\n\n");
}

TEST(cliShowServersState, All) {                            // checklist 30
  auto out = ask("show servers state");
  auto lines = lines_of(out.substr(0, out.size() - 1));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "1");
  EXPECT_EQ(lines[1],
            "# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight "
            "srv_iweight srv_time_since_last_change srv_check_status srv_check_result "
            "srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id "
            "srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr "
            "srv_agent_addr srv_agent_port");
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ' '), 25);
  EXPECT_EQ(lines[2], "3 be_app 1 s1 127.0.0.1 2 0 1 1 359 15 3 4 6 0 0 0 - 18081 - 0 0 - - 0");
  EXPECT_EQ(lines[3], "3 be_app 2 s2 127.0.0.1 0 1 1 1 0 8 2 0 14 0 0 0 - 18082 - 0 0 - - 0");
  EXPECT_EQ(lines[4], "4 ls_tcp 1 t1 ::1 2 0 1 1 6 1 0 0 0 0 0 0 - 18084 - 0 0 - - 0");
  for (std::size_t i = 2; i < lines.size(); ++i)
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ' '), 24);
}

TEST(cliShowServersState, OneBackendAndUnknown) {          // checklist 31
  auto out = ask("show servers state ls_tcp");
  EXPECT_EQ(lines_of(out).size(), 3u);   // version, header, t1
  EXPECT_EQ(ask("show servers state #4"), out);
  EXPECT_EQ(ask("show servers state nope"), "Can't find backend.\n\n");
  EXPECT_EQ(ask("show servers state fe_http"), "Can't find backend.\n\n");
}

TEST(cliShowBackend, Names) {                               // checklist 32
  EXPECT_EQ(ask("show backend"), "# name\nbe_app\nls_tcp\n\n");
}

TEST(cliShowActivity, AllThreads) {                         // checklist 33
  EXPECT_EQ(ask("show activity"),
            "thread_id: 2 (1..4)\n"
            "date_now: 1700000000.123456\n"
            "uptime_now: 103.000042\n"
            "ctxsw: 100 [ 10 20 30 40 ]\n"
            "avg_loop_us: 3 [ 1 2 3 4 ]\n\n");
  EXPECT_EQ(ask("show activity -1"), ask("show activity"));
}

TEST(cliShowActivity, TotalOrOneThread) {
  auto total = ask("show activity 0");
  EXPECT_NE(total.find("\nctxsw: 100\navg_loop_us: 3\n"), std::string::npos);
  auto third = ask("show activity 3");
  EXPECT_NE(third.find("\nctxsw: 30\navg_loop_us: 3\n"), std::string::npos);
  EXPECT_EQ(ask("show activity 5"), "Thread ID number must be between -1 and nbthread\n\n");
  EXPECT_EQ(ask("show activity -2"), "Thread ID number must be between -1 and nbthread\n\n");
  EXPECT_EQ(ask("show activity", Level::kUser), "Permission denied\n\n");
}

TEST(cliShowActivity, SingleThreadHasNoBrackets) {
  g_stats.nbthread = 1;
  auto out = ask("show activity", Level::kOperator, 1);
  g_stats.nbthread = 4;
  EXPECT_NE(out.find("\nctxsw: 10\navg_loop_us: 1\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('['), std::string::npos);
}

TEST(cliRegistry, LaterModulesAddCommands) {
  std::size_t before = commands().size();
  Command c;
  c.words = {"get", "weight"};
  c.usage = "get weight <bk>/<srv>";
  c.help = "report a server's current weight";
  c.run = [](const CommandContext&, const std::vector<std::string>&, std::string* out) {
    *out += "1 (initial 1)";
  };
  register_command(c);
  EXPECT_EQ(commands().size(), before + 1);
  register_command(c);   // same words: replaced, not duplicated
  EXPECT_EQ(commands().size(), before + 1);
  EXPECT_EQ(ask("get weight be_app/s1"), "1 (initial 1)\n\n");
  EXPECT_NE(ask("help get").find("  get weight <bk>/<srv>                   : report"),
            std::string::npos);
}

TEST(cliAtoi, LikeC) {
  EXPECT_EQ(parse_atoi("12abc"), 12);
  EXPECT_EQ(parse_atoi("-1"), -1);
  EXPECT_EQ(parse_atoi("abc"), 0);
  EXPECT_EQ(parse_atoi("99999999999999999999"), 2147483647);
}

}  // namespace
}  // namespace sluice::cli
