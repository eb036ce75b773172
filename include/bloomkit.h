/*
 * bloomkit.h -- the whole public API of bloomkit.
 *
 * bloomkit answers "has this key been seen?" from a structure far smaller
 * than the set: Bloom filters and their relatives.  Include this header and
 * link with -lbloomkit (pkg-config bloomkit, or find_package(bloomkit)).
 *
 * Not included here, since they need <xxhash.h> (libxxhash-dev) on the
 * include path: the inline one-key queries of bloomkit/bloom_inline.h,
 * bloomkit/blocked_inline.h, bloomkit/sbbf_inline.h and
 * bloomkit/fuse_inline.h, and the key hash they inline,
 * bloomkit/hash_inline.h.
 */
#ifndef BLOOMKIT_H
#define BLOOMKIT_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"
#include "bloomkit/bloom.h"
#include "bloomkit/blocked.h"
#include "bloomkit/sbbf.h"
#include "bloomkit/filter.h"
#include "bloomkit/format.h"
#include "bloomkit/counting.h"
#include "bloomkit/cuckoo.h"
#include "bloomkit/scalable.h"
#include "bloomkit/window.h"
#include "bloomkit/fuse.h"
#include "bloomkit/quotient.h"

#endif
