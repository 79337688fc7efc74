// device_test: anydev::Device and DeviceType, parsed and printed as
// torch.device / c10::Device (c10/core/Device.cpp). Pure functions: no
// backend is probed, no environment is read.
#include "anydev/device.h"

#include <set>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev {
namespace {

struct ParseCase {
  const char* text;
  DeviceType type;
  int index;
};

TEST(DeviceParse, AcceptsTheC10Grammar) {
  const ParseCase cases[] = {
      {"cpu", DeviceType::kCPU, -1},    {"cpu:0", DeviceType::kCPU, 0},
      {"cuda", DeviceType::kCUDA, -1},  {"cuda:0", DeviceType::kCUDA, 0},
      {"cuda:1", DeviceType::kCUDA, 1}, {"hip:3", DeviceType::kHIP, 3},
      {"xpu", DeviceType::kXPU, -1},    {"xpu:7", DeviceType::kXPU, 7},
      {"sim", DeviceType::kSim, -1},    {"sim:12", DeviceType::kSim, 12},
      {"sim:127", DeviceType::kSim, 127},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.text);
    ASSERT_OK_AND_ASSIGN(Device d, Device::Parse(c.text));
    EXPECT_EQ(d.type(), c.type);
    EXPECT_EQ(d.index(), c.index);
    EXPECT_EQ(d.has_index(), c.index >= 0);
    EXPECT_EQ(d.is_cpu(), c.type == DeviceType::kCPU);
    EXPECT_EQ(d, Device(c.type, c.index));
  }
}

TEST(DeviceParse, RejectsMalformedStringsQuotingThem) {
  // Each of these is an error in c10 too; the message quotes the input so the
  // user sees which string was wrong.
  const char* const bad[] = {
      "sim:01",  // leading zero
      "sim:-1",  // sign
      "foo:0",   // unknown type
      "sim:1:2", // two indices
      " cuda",   // leading space
      "cuda ",   // trailing space
      "CUDA",    // types are lower case
      "cuda:300",  // does not fit a DeviceIndex
      "cuda:",   // empty index
      ":0",      // empty type
      "cuda:1a", "cuda:a", "cuda::1", "cuda:00", "cu-da", "sim_x",
      "cuda:99999999999999999999",
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    absl::StatusOr<Device> d = Device::Parse(text);
    ASSERT_FALSE(d.ok()) << "parsed as " << *d;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(d.status().message(), text)) << d.status();
  }
}

TEST(DeviceParse, ErrorMessagesMatchPyTorch) {
  EXPECT_STATUS(Device::Parse(""), kInvalidArgument, "Device string must not be empty");
  EXPECT_STATUS(Device::Parse("sim:01"), kInvalidArgument, "Invalid device string: 'sim:01'");
  EXPECT_STATUS(Device::Parse("sim:-1"), kInvalidArgument, "Invalid device string: 'sim:-1'");
  // A control byte is shown as \xNN: a NUL would end the message where Python reads it.
  EXPECT_STATUS(Device::Parse(absl::string_view("cu\0da", 5)), kInvalidArgument,
                "Invalid device string: 'cu\\x00da'");
  EXPECT_STATUS(Device::Parse("sim:1:2"), kInvalidArgument, "Invalid device string: 'sim:1:2'");
  EXPECT_STATUS(Device::Parse(" cuda"), kInvalidArgument, "Invalid device string: ' cuda'");
  EXPECT_STATUS(Device::Parse("foo:0"), kInvalidArgument,
                "Expected one of cpu, cuda, hip, xpu, sim, mps, meta, privateuseone device type "
                "at start of device string: foo:0");
  EXPECT_STATUS(Device::Parse("CUDA"), kInvalidArgument,
                "device type at start of device string: CUDA");
  EXPECT_STATUS(Device::Parse("cuda:300"), kInvalidArgument,
                "Could not parse device index '300' in device string 'cuda:300'");
  EXPECT_STATUS(Device::Parse("cuda:128"), kInvalidArgument, "'cuda:128'");
}

TEST(DeviceToString, RoundTripsThroughParse) {
  for (DeviceType t : kAllDeviceTypes) {
    for (int index : {-1, 0, 1, 9, 10, 63, 127}) {
      const Device d(t, index);
      const std::string text = d.ToString();
      SCOPED_TRACE(text);
      ASSERT_OK_AND_ASSIGN(Device back, Device::Parse(text));
      EXPECT_EQ(back, d);
      EXPECT_EQ(back.ToString(), text);
    }
  }
}

TEST(DeviceToString, PrintsAsTorchDevice) {
  EXPECT_EQ(Device(DeviceType::kCUDA, 1).ToString(), "cuda:1");
  EXPECT_EQ(Device(DeviceType::kCUDA).ToString(), "cuda");
  EXPECT_EQ(Device(DeviceType::kSim, 0).ToString(), "sim:0");
  EXPECT_EQ(Device(DeviceType::kCPU).ToString(), "cpu");
  std::ostringstream os;
  os << Device(DeviceType::kXPU, 2) << " " << DeviceType::kHIP;
  EXPECT_EQ(os.str(), "xpu:2 hip");
}

TEST(DeviceEquality, TypeAndIndexBothCount) {
  EXPECT_EQ(Device(DeviceType::kSim, 1), Device(DeviceType::kSim, 1));
  EXPECT_NE(Device(DeviceType::kSim, 1), Device(DeviceType::kSim, 0));
  EXPECT_NE(Device(DeviceType::kSim, 1), Device(DeviceType::kCUDA, 1));
  // "cuda" and "cuda:0" are different devices, as in torch.
  EXPECT_NE(Device(DeviceType::kCUDA), Device(DeviceType::kCUDA, 0));

  absl::flat_hash_set<Device> set;
  for (DeviceType t : kAllDeviceTypes) {
    for (int i = -1; i < 4; ++i) set.insert(Device(t, i));
  }
  EXPECT_EQ(set.size(), static_cast<size_t>(kNumDeviceTypes) * 5);
  EXPECT_TRUE(set.contains(Device(DeviceType::kSim, 3)));
}

TEST(DeviceCreate, ChecksTheIndex) {
  ASSERT_OK_AND_ASSIGN(Device d, Device::Create(DeviceType::kCUDA, 1));
  EXPECT_EQ(d, Device(DeviceType::kCUDA, 1));
  ASSERT_OK_AND_ASSIGN(d, Device::Create(DeviceType::kSim, 127));
  EXPECT_EQ(d.index(), 127);
  // -1 is "no index" (what StreamData3 carries for an unindexed device).
  ASSERT_OK_AND_ASSIGN(d, Device::Create(DeviceType::kXPU, -1));
  EXPECT_FALSE(d.has_index());

  EXPECT_STATUS(Device::Create(DeviceType::kCUDA, -2), kInvalidArgument,
                "Device index must not be negative");
  EXPECT_STATUS(Device::Create(DeviceType::kCUDA, -1000), kInvalidArgument,
                "Device index must not be negative");
  EXPECT_STATUS(Device::Create(DeviceType::kSim, 128), kInvalidArgument, "128");
  // Indices wider than a DeviceIndex are not narrowed silently.
  EXPECT_STATUS(Device::Create(DeviceType::kSim, int64_t{1} << 32), kInvalidArgument,
                "4294967296");
}

TEST(DeviceType, ValuesAreC10s) {
  EXPECT_EQ(static_cast<int>(DeviceType::kCPU), 0);
  EXPECT_EQ(static_cast<int>(DeviceType::kCUDA), 1);
  EXPECT_EQ(static_cast<int>(DeviceType::kHIP), 6);
  EXPECT_EQ(static_cast<int>(DeviceType::kXPU), 12);
  EXPECT_EQ(static_cast<int>(DeviceType::kMPS), 13);
  EXPECT_EQ(static_cast<int>(DeviceType::kMeta), 14);
  EXPECT_EQ(static_cast<int>(DeviceType::kSim), 20);  // PrivateUse1
  // sim holds PrivateUse1's number; privateuseone has an anydev-only one.
  EXPECT_EQ(static_cast<int>(DeviceType::kPrivateUse1), 64);
}

TEST(DeviceType, FromIntRoundTrips) {
  for (DeviceType t : kAllDeviceTypes) {
    ASSERT_OK_AND_ASSIGN(DeviceType back, DeviceTypeFromInt(static_cast<int64_t>(t)));
    EXPECT_EQ(back, t);
  }
  for (int64_t bad : {int64_t{-1}, int64_t{2}, int64_t{19}, int64_t{21}, int64_t{65}, int64_t{1} << 40}) {
    EXPECT_STATUS(DeviceTypeFromInt(bad), kInvalidArgument,
                  absl::StrCat("Unknown device type ", bad));
  }
}

TEST(DeviceType, ParseAcceptsExactlyTheNames) {
  for (DeviceType t : kAllDeviceTypes) {
    ASSERT_OK_AND_ASSIGN(DeviceType back, ParseDeviceType(DeviceTypeName(t)));
    EXPECT_EQ(back, t);
  }
  EXPECT_EQ(DeviceTypeName(DeviceType::kCUDA), "cuda");
  EXPECT_EQ(DeviceTypeName(DeviceType::kSim), "sim");
  // The names torch.device parses that anydev has no backend for.
  EXPECT_EQ(*ParseDeviceType("mps"), DeviceType::kMPS);
  EXPECT_EQ(*ParseDeviceType("meta"), DeviceType::kMeta);
  EXPECT_EQ(*ParseDeviceType("privateuseone"), DeviceType::kPrivateUse1);
  for (const char* bad : {"", "CUDA", "cuda:0", "gpu", " cpu", "privateuse1"}) {
    SCOPED_TRACE(bad);
    // The error lists the valid names.
    EXPECT_STATUS(ParseDeviceType(bad), kInvalidArgument,
                  "cpu, cuda, hip, xpu, sim, mps, meta, privateuseone");
  }
}

TEST(DeviceType, DenseIndexIsAPermutation) {
  std::set<int> seen;
  for (DeviceType t : kAllDeviceTypes) {
    const int i = DenseIndex(t);
    EXPECT_GE(i, 0);
    EXPECT_LT(i, kNumDeviceTypes);
    seen.insert(i);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kNumDeviceTypes));
  // kAllDeviceTypes is in accelerator-choice order with the CPU last.
  EXPECT_EQ(kAllDeviceTypes[0], DeviceType::kCUDA);
  EXPECT_EQ(kAllDeviceTypes[kNumDeviceTypes - 1], DeviceType::kCPU);
}

TEST(DeviceType, CpuAndMetaAreNotAccelerators) {
  for (DeviceType t : kAllDeviceTypes) {
    EXPECT_EQ(IsAcceleratorType(t), t != DeviceType::kCPU && t != DeviceType::kMeta) << t;
  }
}


}  // namespace
}  // namespace anydev
