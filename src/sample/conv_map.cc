// map_<match>[_<output>](<file>[,<default>]) (HAProxy's section 7.3.1): looks the sample up in a
// map file (pattern/pattern.h) with a match method, and gives the value of the entry found,
// read as a string, an integer (_int) or an address (_ip), or the key that matched (_key), or
// the default when nothing matches (no sample without one; the _key forms have none). `map(file)` is `map_str`. map_regm
// substitutes the regex's groups (\1) in the value. The file is read once at start-up and then follows the CLI's changes.
#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "pattern/pattern.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

using pattern::Method;
using pattern::ValueType;

// What the check compiles into the first argument.
struct MapArg {
  std::shared_ptr<pattern::Expr> expr;
  pattern::Item fallback;   // the default, parsed for the output type
};

// The converter's name as HAProxy writes it (for `show map`'s "used by map").
template <Method M, ValueType V>
std::string check_map(Arg* a, const ParseCtx&) {
  auto& reg = pattern::Registry::global();
  bool created = false;
  auto ref = reg.file_ref(a[0].str, true, &created);
  if (!ref.ok()) return ref.error().message;
  if (created) {
    auto loaded = ref.value()->load_file();
    if (!loaded.ok()) return loaded.error().message;
  }
  const auto& where = pattern::config_line();
  ref.value()->add_use(fmt::format("map at file '{}' line {}", where.file, where.line));
  pattern::Kind kind;
  kind.method = M;
  kind.value = V;
  auto m = std::make_shared<MapArg>();
  m->expr = std::make_shared<pattern::Expr>(ref.value(), kind);
  std::size_t bad = 0;
  auto compiled = ref.value()->compile(*m->expr, &bad);
  if (!compiled.ok())
    return fmt::format("{} at line {} of file '{}'", compiled.error().message, bad, a[0].str);
  if (a[1].given) {
    if (V == ValueType::kInt) {
      m->fallback.vint = a[1].sint;
    } else if (V == ValueType::kIp) {
      auto r = pattern::parse_value(kind, a[1].str, m->fallback);
      if (!r.ok()) return fmt::format("{} as the default value", r.error().message);
    }
  }
  a[0].obj = std::move(m);
  return {};
}

// The value found (or the default) as the output type; strings are copied out of the map,
// which may change once the lookup is over.
void set_out(ValueType v, const pattern::Item& it, std::string_view text, Sample& smp, Scratch& sc) {
  if (v == ValueType::kInt) {
    smp = Sample::integer(it.vint);
    return;
  }
  if (v == ValueType::kIp) {
    Sample s;
    if (it.vaddr.family == AF_INET6) {
      s.type = Type::kIpv6;
      std::memcpy(&s.v6, it.vaddr.bytes, 16);
    } else {
      s.type = Type::kIpv4;
      std::memcpy(&s.v4, it.vaddr.bytes, 4);
    }
    smp = s;
    return;
  }
  std::string& b = sc.next();
  b.assign(text);
  smp = Sample::string(b);
}

template <Method M, ValueType V>
bool c_map(const Arg* a, Sample& smp, const Ctx& ctx) {
  const auto* m = static_cast<const MapArg*>(a[0].obj.get());
  Scratch& sc = ctx.sc();
  Sample in = smp;
  if constexpr (M == Method::kIp) {
    if (in.type != Type::kIpv4 && in.type != Type::kIpv6) {
      Sample v4 = in;
      if (cast(v4, Type::kIpv4, sc)) in = v4;
      else if (!cast(in, Type::kIpv6, sc)) in.type = Type::kAny;
    }
  }
  auto find = [&](const pattern::Index& idx, base::Regex::Groups* g) -> const pattern::Item* {
    if constexpr (M == Method::kIp) {
      if (in.type == Type::kIpv4) return idx.find_v4(in.v4);
      if (in.type == Type::kIpv6) return idx.find_v6(in.v6);
      return nullptr;
    } else if constexpr (M == Method::kInt) {
      return idx.find_int(in.sint);
    } else {
      return idx.find_str(in.str, M == Method::kRegm ? g : nullptr);
    }
  };
  bool found = m->expr->lookup(find, [&](const pattern::Item& it, const base::Regex::Groups& g) {
    if constexpr (M == Method::kRegm) {
      if (V == ValueType::kStr) {
        std::string& b = sc.next();
        b = base::Regex::expand(it.value, in.str, g);
        smp = Sample::string(b);
        return;
      }
    }
    set_out(V, it, V == ValueType::kKey ? it.key : it.value, smp, sc);
  });
  if (found) return true;
  if (!a[1].given) return false;
  if (V == ValueType::kStr || V == ValueType::kKey) {
    smp = Sample::string(a[1].str, kConst);
    return true;
  }
  set_out(V, m->fallback, {}, smp, sc);
  return true;
}

constexpr Type in_type(Method m) {
  return m == Method::kIp ? Type::kAny : m == Method::kInt ? Type::kSint : Type::kStr;
}

template <Method M, ValueType V>
constexpr ConvDef def(std::string_view name) {
  // The _key forms take no default (HAProxy).
  constexpr ArgSpec spec = V == ValueType::kInt   ? args(1, ArgType::kStr, ArgType::kSint)
                           : V == ValueType::kKey ? args(1, ArgType::kStr)
                                                  : args(1, ArgType::kStr, ArgType::kStr);
  constexpr Type out = V == ValueType::kInt ? Type::kSint : V == ValueType::kIp ? Type::kAny : Type::kStr;
  return ConvDef{name, c_map<M, V>, spec, check_map<M, V>, in_type(M), out};
}

#define SLUICE_MAP_FORMS(NAME, M)                                                   \
  def<M, ValueType::kStr>("map_" NAME), def<M, ValueType::kInt>("map_" NAME "_int"), \
      def<M, ValueType::kIp>("map_" NAME "_ip"), def<M, ValueType::kKey>("map_" NAME "_key")

constexpr ConvDef kConvs[] = {
    def<Method::kStr, ValueType::kStr>("map"),
    SLUICE_MAP_FORMS("str", Method::kStr),   SLUICE_MAP_FORMS("beg", Method::kBeg),
    SLUICE_MAP_FORMS("sub", Method::kSub),   SLUICE_MAP_FORMS("dir", Method::kDir),
    SLUICE_MAP_FORMS("dom", Method::kDom),   SLUICE_MAP_FORMS("end", Method::kEnd),
    SLUICE_MAP_FORMS("reg", Method::kReg),   def<Method::kRegm, ValueType::kStr>("map_regm"),
    SLUICE_MAP_FORMS("int", Method::kInt),   SLUICE_MAP_FORMS("ip", Method::kIp),
};

#undef SLUICE_MAP_FORMS

}  // namespace

std::span<const ConvDef> map_convs() { return kConvs; }

}  // namespace sluice::sample::tables
