// Shared by the OpenCL C baselines; `benchmarks/opencl_c.py` pastes it where a
// kernel file says `#include "common.h"` (the runtime's compiler gets one source).
//
// SG: sub-group size. T: element type. WGY: work-items along y.
// LX, LY: the work-item's position in the work-group. With -DSGID=1 they
// are computed from the sub-group ids (sub-groups run along x, then y).
// That made the fused kernel's local-memory variant ~1.7x faster, but every
// other variant tried 3-10x slower, so the suite tries it only for 16×1
// work-groups (see benchmarks/README.md). Files define WGX before including.

#ifndef SG
#define SG 16
#endif
#ifndef SGID
#define SGID 0
#endif
#if SGID
#define SUBGROUPS_X (WGX > SG ? WGX / SG : 1)
#define LX ((int)((get_sub_group_id() % SUBGROUPS_X) * SG + get_sub_group_local_id()))
#define LY ((int)(get_sub_group_id() / SUBGROUPS_X))
#else
#define LX ((int)get_local_id(0))
#define LY ((int)get_local_id(1))
#endif
#ifndef T
#define T float
#endif
#ifndef WGY
#define WGY 1
#endif
