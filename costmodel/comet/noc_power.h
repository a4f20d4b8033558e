// Energy of moving data on a 2-D mesh NoC, after the ORION 2.0 router and link power model as
// HISIM evaluates it (fixed technology constants: Vdd 0.9 V, lambda 0.016, 5x5 routers, 3 VCs
// of depth 10). Each power term is weighted by the cycles it is active: hops x stage latency
// plus t_enq x Q / W for the flits of Q bits on W links.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.10 "NoC"; ORION 2.0 (Kahng et al.,
// DATE 2009); HISIM (IEEE doc 10844846).
#pragma once

#include <cstdint>

namespace yirage::costmodel::comet {

/// Inputs of one NoC transfer.
struct RouterActivity {
  double channel_width = 32;    // W: links of 1 bit/cycle
  std::uint32_t hops = 0;       // H along the critical path
  double enqueue_cycles = 0;    // t_enq: cycles per flit
  double bits = 0;              // Q: bits injected along the critical path
  std::uint32_t mesh_edge = 1;  // routers per mesh side
};

/// Energy of the transfer, in pJ (the model's unit, as the reference reports it).
double router_energy(const RouterActivity& a);

}  // namespace yirage::costmodel::comet
