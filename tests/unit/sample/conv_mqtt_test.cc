// mqtt_is_valid and mqtt_field_value; expected values from HAProxy 3.5-dev5 on the same packets
// (sent as request bodies to `http-request return ... lf-string "%[req.body,...]"`).
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::on_body;
using testing::parse_error;

std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return out;
}

// "v" for mqtt_is_valid: "1", "0" or "<none>".
std::string valid(std::string_view hex) { return on_body(unhex(hex), ",mqtt_is_valid"); }
std::string field(std::string_view hex, std::string_view type, std::string_view name) {
  return on_body(unhex(hex),
                 ",mqtt_field_value(" + std::string(type) + "," + std::string(name) + ")");
}

// MQTT 3.1.1 CONNECT, clean session, keep alive 60, client "abcd".
constexpr std::string_view kConnect311 = "101000044d5154540402003c000461626364";
// 3.1.1 CONNECT with will (QoS 1, retain), user name and password.
constexpr std::string_view kConnect311Full =
    "102300044d51545404ee001e0003636c690002777400027770000475736572000470617373";
// 5.0 CONNECT with every connect property, a user property, and every will property.
constexpr std::string_view kConnect5 =
    "107300044d51545405c6002d281100000e10210014270001000022000a19011700150005534352414d16000201"
    "022600016b000176000263352918000000050101020000007803000a746578742f706c61696e08000672657370"
    "2f74090004636f7272000377743500037770350002753500027035";
constexpr std::string_view kConnect5Min = "100e00044d5154540502003c0000016d";
constexpr std::string_view kConnack311 = "20020105";
// 5.0 CONNACK with every CONNACK property.
constexpr std::string_view kConnack5 =
    "204d01004a11000000072100092401250027000003e812000861737369676e65642200031f0003776879280129"
    "002a011300631a000272691c0003737276150002616d160002616426000161000162";

TEST(ConvMqtt, IsValid) {
  for (auto p : {kConnect311, kConnect311Full, kConnect5, kConnect5Min, kConnack311, kConnack5})
    EXPECT_EQ(valid(p), "1") << p;
  EXPECT_EQ(valid("20020000"), "1");
  // MQIsdp level 3, any protocol name, bytes after the packet.
  EXPECT_EQ(valid("101200064d51497364700302003c000461626364"), "1");
  EXPECT_EQ(valid("101000046d7174740402003c000461626364"), "1");
  EXPECT_EQ(valid(std::string(kConnect311) + "00"), "1");
  EXPECT_EQ(valid(std::string(kConnect311) + std::string(kConnect311)), "1");
  // Will QoS and retain without the will flag, QoS 3, a password without a user name.
  EXPECT_EQ(valid("101000044d515454040a003c000461626364"), "1");
  EXPECT_EQ(valid("101600044d515454041e003c000461626364000174000170"), "1");
  EXPECT_EQ(valid("101400044d5154540442003c00046162636400027077"), "1");
  EXPECT_EQ(valid("100c00044d5154540402003c0000"), "1");   // empty client identifier
  EXPECT_EQ(valid("101e00044d5154540502003c102600016b0001762600026b320002763200016d"), "1");
  EXPECT_EQ(valid("100f00044d5154540502003c800000016d"), "1");   // overlong property length
  EXPECT_EQ(valid("2003000000"), "1");   // CONNACK 5.0 without properties
  EXPECT_EQ(valid("20020099"), "1");
}

TEST(ConvMqtt, NotKnownYet) {
  // Too short to say, or shorter than the remaining length: no sample.
  for (std::string_view p : {"", "10", "00", "f0", "101000044d5154540402003c0004616263",
                             "10ffffff7f", "301000", "200500"})
    EXPECT_EQ(valid(p), "<none>") << p;
}

TEST(ConvMqtt, Invalid) {
  for (std::string_view p : {
           "0000", "1000", "2000", "f000", "108000", "1080", "10ffffffff01",   // header, length
           "111000044d5154540402003c000461626364",        // CONNECT flags
           "111000",                                      // checked before the length
           "300400017478", "c000", "21020000",            // PUBLISH, PINGREQ, CONNACK flags
           "100f00044d5154540402003c000461626364",        // remaining length too short
           "101000044d5154540602003c000461626364",        // level 6
           "101000044d5154540202003c000461626364",        // level 2
           "101000044d5154540502003c000461626364",        // level 5 without properties
           "101000044d5154540403003c000461626364",        // reserved flag
           "101000044d5154540482003c000461626364",        // user name flag, no user name
           "100a00044d5154540402003c",                    // no client identifier
           "101200044d5154540402003c0004616263647a7a",    // bytes left in the packet
           "20020200", "200100", "20050000007a7a",        // CONNACK
           "101000044d5154540502003c02240100016d",        // Maximum QoS in a CONNECT
           "101400044d5154540502003c0621000121000200016d",   // a property twice
           "101100044d5154540502003c0921000100016d",      // property length past the packet
           "101300044d5154540502003c05180000000100016d",  // a will property in CONNECT's
           "101400044d5154540502003c0691000000000100016d",   // a two-byte identifier
           "101000044d5154540502003c02170200016d",        // Request Problem Information 2
           "101000044d5154540502003c02190200016d",        // Request Response Information 2
           "101300044d5154540502003c05270000000000016d",  // Maximum Packet Size 0
           "101100044d5154540502003c0321000000016d",      // Receive Maximum 0
           "101200044d5154540502003c041600017800016d",    // Authentication Data alone
           "101300044d5154540502003c05150005616200016d",  // a string past the block
           "101700044d5154540506003c00000163020105000174000170",   // Payload Format 5
           "101f00044d5154540506003c000001630a18000000011800000001000174000170",
           "101a00044d5154540506003c00000163051100000001000174000170",
           "100e00044d5154540506003c00000163",            // will flag, nothing after
           "200700000424012401", "20050000020101", "20050000052401",
           "20050000022402", "20050000022502", "20050000022802", "20050000022902",
           "20050000022a02", "20080000052700000000", "2006000003210000",
       })
    EXPECT_EQ(valid(p), "0") << p;
}

TEST(ConvMqtt, ConnectFields) {
  EXPECT_EQ(field(kConnect311, "connect", "flags"), "2");
  EXPECT_EQ(field(kConnect311, "connect", "protocol_name"), "MQTT");
  EXPECT_EQ(field(kConnect311, "CONNECT", "Protocol_Version"), "4");
  EXPECT_EQ(field(kConnect311, "1", "client_identifier"), "abcd");
  EXPECT_EQ(field(kConnect311, "connect", "keepalive"), "60");
  for (auto f : {"will_topic", "will_payload", "username", "password"})
    EXPECT_EQ(field(kConnect311, "connect", f), "<none>") << f;
  EXPECT_EQ(field(kConnect311Full, "connect", "flags"), "238");
  EXPECT_EQ(field(kConnect311Full, "connect", "will_topic"), "wt");
  EXPECT_EQ(field(kConnect311Full, "connect", "will_payload"), "wp");
  EXPECT_EQ(field(kConnect311Full, "connect", "username"), "user");
  EXPECT_EQ(field(kConnect311Full, "connect", "password"), "pass");
  EXPECT_EQ(field(kConnect311Full, "connect", "keepalive"), "30");
  EXPECT_EQ(field("101200064d51497364700302003c000461626364", "1", "protocol_name"), "MQIsdp");
  EXPECT_EQ(field("101200064d51497364700302003c000461626364", "1", "protocol_version"), "3");
  // Empty strings are no sample; the wrong type, an invalid or incomplete packet neither.
  EXPECT_EQ(field("100c00044d5154540402003c0000", "1", "client_identifier"), "<none>");
  EXPECT_EQ(field(kConnack311, "connect", "flags"), "<none>");
  EXPECT_EQ(field(kConnect311, "connack", "flags"), "<none>");
  EXPECT_EQ(field("101000044d5154540403003c000461626364", "1", "flags"), "<none>");
  EXPECT_EQ(on_body(unhex("100f00044d5154540402003c0003610062"),
                    ",mqtt_field_value(1,client_identifier),hex"),
            "610062");
  // 3.1.1 has no properties.
  EXPECT_EQ(field(kConnect311, "1", "17"), "<none>");
  EXPECT_EQ(field(kConnect311Full, "00000000000000000001", "24"), "<none>");
}

TEST(ConvMqtt, ConnectProperties) {
  EXPECT_EQ(field(kConnect5, "connect", "flags"), "198");
  EXPECT_EQ(field(kConnect5, "connect", "protocol_version"), "5");
  EXPECT_EQ(field(kConnect5, "connect", "client_identifier"), "c5");
  EXPECT_EQ(field(kConnect5, "connect", "will_topic"), "wt5");
  EXPECT_EQ(field(kConnect5, "connect", "password"), "p5");
  EXPECT_EQ(field(kConnect5, "connect", "keepalive"), "45");
  const std::pair<const char*, const char*> want[] = {
      {"17", "3600"}, {"33", "20"}, {"39", "65536"}, {"34", "10"}, {"25", "1"}, {"23", "0"},
      {"21", "SCRAM"}, {"24", "5"}, {"1", "1"}, {"2", "120"}, {"3", "text/plain"},
      {"8", "resp/t"}, {"9", "corr"}, {"38", "<none>"}};
  for (auto [id, v] : want) EXPECT_EQ(field(kConnect5, "1", id), v) << id;
  EXPECT_EQ(on_body(unhex(kConnect5), ",mqtt_field_value(1,22),hex"), "0102");
  // Left out: numbers read 0, strings nothing; will properties need the will flag.
  for (auto id : {"17", "33", "39", "34", "25", "23"})
    EXPECT_EQ(field(kConnect5Min, "1", id), "0") << id;
  for (auto id : {"21", "22", "24", "1", "2", "3", "8", "9", "38"})
    EXPECT_EQ(field(kConnect5Min, "1", id), "<none>") << id;
  constexpr std::string_view kWillNoProps = "101500044d5154540506003c0000016300000174000170";
  EXPECT_EQ(field(kWillNoProps, "1", "24"), "0");
  EXPECT_EQ(field(kWillNoProps, "1", "1"), "0");
  EXPECT_EQ(field(kWillNoProps, "1", "3"), "<none>");
  EXPECT_EQ(field(kWillNoProps, "1", "will_topic"), "t");
}

TEST(ConvMqtt, ConnackFields) {
  EXPECT_EQ(field("20020000", "connack", "flags"), "0");
  EXPECT_EQ(field(kConnack311, "connack", "flags"), "1");
  EXPECT_EQ(field(kConnack311, "Connack", "Reason_Code"), "5");
  EXPECT_EQ(field(kConnack311, "2", "protocol_version"), "4");
  EXPECT_EQ(field(kConnack311, "2", "17"), "<none>");
  EXPECT_EQ(field(kConnack5, "2", "protocol_version"), "5");
  const std::pair<const char*, const char*> want[] = {
      {"17", "7"},  {"33", "9"},  {"36", "1"},   {"37", "0"},  {"39", "1000"},
      {"18", "assigned"}, {"34", "3"}, {"31", "why"}, {"40", "1"}, {"41", "0"}, {"42", "1"},
      {"19", "99"}, {"26", "ri"}, {"28", "srv"}, {"21", "am"}, {"22", "ad"}, {"38", "<none>"}};
  for (auto [id, v] : want) EXPECT_EQ(field(kConnack5, "2", id), v) << id;
  // 5.0 without properties: numbers 0, strings nothing.
  EXPECT_EQ(field("2003000000", "2", "protocol_version"), "5");
  for (auto id : {"17", "40", "41", "42", "19", "39", "34", "37"})
    EXPECT_EQ(field("2003000000", "2", id), "0") << id;
  for (auto id : {"18", "22", "26", "28", "21"})
    EXPECT_EQ(field("2003000000", "2", id), "<none>") << id;
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("req.body,mqtt_field_value(2,17)", pc)->type(), Type::kStr);
  EXPECT_EQ(Expr::parse("req.body,mqtt_is_valid", pc)->type(), Type::kBool);
}

TEST(ConvMqtt, ParseErrors) {
  auto err = [](std::string_view a) {
    return parse_error("req.body,mqtt_field_value(" + std::string(a) + ")");
  };
  const std::string pre = "invalid args in converter 'mqtt_field_value' : ";
  for (auto ok : {"connect,flags", "CONNECT,FLAGS", "Connack,Reason_Code", "01,17",
                  "00000000000000000001,17", "4294967297,flags", "connect,Protocol_Name"})
    EXPECT_EQ(err(ok), "ok") << ok;
  for (int id : {1, 2, 3, 8, 9, 17, 21, 22, 23, 24, 25, 33, 34, 38, 39})
    EXPECT_EQ(err("1," + std::to_string(id)), "ok") << id;
  for (int id : {17, 18, 19, 21, 22, 26, 28, 31, 33, 34, 36, 37, 38, 39, 40, 41, 42})
    EXPECT_EQ(err("2," + std::to_string(id)), "ok") << id;
  for (int id : {0, 4, 11, 18, 36, 43}) EXPECT_NE(err("1," + std::to_string(id)), "ok") << id;
  EXPECT_EQ(err("1,18"), pre + "Unknown MQTT field name '18' for packet type '1'");
  EXPECT_EQ(err("3,flags"), pre + "Unknown MQTT field name 'flags' for packet type '3'");
  EXPECT_EQ(err("publish,flags"),
            pre + "Unknown MQTT field name 'flags' for packet type 'publish'");
  EXPECT_EQ(err("connect,reason_code"),
            pre + "Unknown MQTT field name 'reason_code' for packet type 'connect'");
  EXPECT_EQ(err("2,protocol_name"),
            pre + "Unknown MQTT field name 'protocol_name' for packet type '2'");
  for (auto f : {"017", "021", "0x11", "+17", "-1", "1x", "1.0"})
    EXPECT_EQ(err(std::string("1,") + f),
              pre + "Unknown MQTT field name '" + f + "' for packet type '1'");
  for (auto t : {"0", "16", "foo", "1x", "+1", "0x1"})
    EXPECT_EQ(err(std::string(t) + ",flags"), pre + "Unknown MQTT type '" + t + "'");
  EXPECT_EQ(err("connect"), "invalid arg 2 in converter 'mqtt_field_value' : missing arguments "
                            "(got 1/2), type 'string' expected");
  EXPECT_EQ(err("connect,17,x"),
            "invalid arg 2 in converter 'mqtt_field_value' : expected ')' before ',x)'");
  EXPECT_EQ(parse_error("req.body,mqtt_is_valid(1)"),
            "invalid arg 1 in converter 'mqtt_is_valid' : expected ')' before '1)'");
}

}  // namespace
}  // namespace sluice::sample
