#include "costmodel/comet/noc_power.h"

namespace yirage::costmodel::comet {
namespace {

// Technology constants of the ORION 2.0 model as HISIM sets them (SI units: V, A, F, m).
constexpr double kVdd = 0.9;
constexpr double kR = 606.321;       // ohm, driver resistance
constexpr double kIoffP = 1.02e-6;   // A
constexpr double kIoffN = 1.02e-6;   // A
constexpr double kCgPwr = 5.34e-16;  // F
constexpr double kCdPwr = 2.67e-16;  // F
constexpr double kCgdl = 1.068e-16;  // F
constexpr double kCg = 5.34e-16;     // F
constexpr double kCd = 2.67e-16;     // F
constexpr double kLambda = 0.016;
constexpr double kMetalPitch = 8e-5;
constexpr double kCiDelay = 3 * (kCg + kCgdl);
constexpr double kCoDelay = 3 * kCd;
constexpr double kCi = 3 * kCgPwr;
constexpr double kCo = 3 * kCdPwr;
constexpr double kFo4 = kR * (3 * kCd + 12 * kCg + 12 * kCgdl);  // s
constexpr double kFclk = 1.0 / (20 * kFo4);                      // Hz
constexpr double kChannelPitch = 2 * kMetalPitch;
constexpr double kCrossbarPitch = 2 * kMetalPitch;
constexpr double kHDff = 8;              // height of a D flip-flop cell (pitches)
constexpr int kBufferDepth = 3 * 10;     // virtual channels x depth
constexpr double kSwitchPorts = 5;       // router inputs and outputs
constexpr double kCw = 4 * 2.67339e-13;  // wire capacitance per unit length, F

double repeated_wire(double length, double k, double m, double n) {
  double ca = k * (kCi + kCo) + kCw * (length / (m * n));
  return 0.5 * ca * kVdd * kVdd * kFclk * m * n;
}

double wire_clock(double m, double w) {
  double columns = kHDff * kMetalPitch / kChannelPitch;
  double c = (1 + 5.0 / 16.0 * (1 + kCoDelay / kCiDelay)) *
             (w * kChannelPitch * kCw * columns + w * kCiDelay);
  return m * c * kVdd * kVdd * kFclk;
}

double wire_dff(double m, double w) {
  double cdin = 2 * 0.8 * (kCi + kCo) + 2 * (2.0 / 3.0 * 0.8 * kCo);
  double cclk = 2 * 0.8 * (kCi + kCo) + 2 * (2.0 / 3.0 * 0.8 * kCgPwr);
  return (0.5 * cdin + cclk) * m * w * kVdd * kVdd * kFclk;
}

double word_line(double width, double depth) {
  double ccell = 2 * (4.0 * kLambda) * kCgPwr + 6 * kMetalPitch * kCw;
  double x = 1.0 + (5.0 / 16.0) * (1 + kCo / kCi);
  double predecode = x * (kCw * (8 * kMetalPitch + depth) * kCi);
  double decode = x * width * ccell;
  double harray = 6 * width * kMetalPitch;
  double y = 1.25 * (1 + kCo / kCi);
  double precharge = y * (kCw * harray + 3 * width * kCi);
  double write_enable = y * (kCw * harray + 2 * width * kCi);
  return (precharge + write_enable + 2 * predecode + decode) * kVdd * kVdd * kFclk;
}

double bit_line(double depth, bool write) {
  double cbl = depth * (4.0 * kLambda * kCdPwr + 8 * kMetalPitch * kCw);
  double p = cbl * kVdd * kVdd * kFclk;
  return write ? p + 0.5 * 2 * (kCo + kCi) * kVdd * kVdd : p;
}

double crossbar(double width) {
  double wx = width * kSwitchPorts * kCrossbarPitch;
  double cw_in = wx * kCw;
  double cw_out = wx * kCw;
  double cxi = cw_out / 16.0;
  double cxo = 4.0 * cxi * (kCoDelay / kCiDelay);
  double cti = cw_in / 16.0;
  double cto = 4.0 * cti * (kCoDelay / kCiDelay);
  double driver = 5.0 / 16.0 * (1 + kCoDelay / kCiDelay) * (0.5 * kCw * wx + cti);
  double cin = driver + cw_in + cti + kSwitchPorts * cxi;
  double cout = cw_out + cto + kSwitchPorts * cxo;
  return 0.5 * (cin + cout) * kVdd * kVdd * kFclk;
}

double crossbar_control(double width) {
  double wx = width * kSwitchPorts * kCrossbarPitch;
  double cti = (5.0 / 16.0) * wx * kCw;
  double cctrl = width * cti + 2 * wx * kCw;
  double cdrive = (5.0 / 16.0) * (1 + kCoDelay / kCiDelay) * cctrl;
  return (cdrive + cctrl) * kVdd * kVdd * kFclk;
}

}  // namespace

// Per-term power (W) x active cycles, summed; stage latencies t_RC = t_VA = t_SA = t_ST =
// t_L = 1 cycle. The output-control term is weighted by the already-scaled output clock
// power, as in the reference implementation.
double router_energy(const RouterActivity& a) {
  const double w = a.channel_width;
  const double h = a.hops;
  const double flits = a.enqueue_cycles * a.bits / w;  // t_enq x Q / W, cycles
  const double e = a.mesh_edge;
  const double links = e * (e * 2 - 2);
  const double routers = e * e;
  double channel_wire = repeated_wire(2.0, 8.1, 2, 1) * (h + flits) * links;
  double channel_clock = wire_clock(2, 2.0) * 2 * routers;
  double channel_dff = wire_dff(2, 2.0) * (h + flits) * links;
  double buffer_read =
      (word_line(w, kBufferDepth) + bit_line(kBufferDepth, false) * w) * flits * routers;
  double buffer_write =
      (word_line(w, kBufferDepth) + bit_line(kBufferDepth, true) * w) * flits * routers;
  double xbar = crossbar(w) * w * h * 3 * routers;
  double xbar_ctrl = crossbar_control(w) * (h * 3 + flits) * routers;
  double output = wire_dff(1, w) * (h + flits) * routers;
  double output_clock = wire_clock(1, w) * h * 2 * routers;
  double output_ctrl = output_clock * (h + flits) * routers;
  return channel_wire + channel_clock + channel_dff + buffer_read + buffer_write + xbar +
         xbar_ctrl + output + output_clock + output_ctrl;
}

}  // namespace yirage::costmodel::comet
