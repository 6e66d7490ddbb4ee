//! Placement: the NUMA memory policy of I/O buffers, where their pages
//! really are, and the CPU affinity of the calling thread.
//!
//! Raw system calls, no libnuma:
//! - [`mbind`] gives a range of memory a policy (`mbind(2)`): pages
//!   allocated there later come from the policy's nodes, and pages already
//!   present are moved (`MPOL_MF_MOVE`) or the call fails
//!   (`MPOL_MF_STRICT`). [`place`] is the same with the nodes checked first
//!   and errors that name the node, the policy and the nodes there are.
//! - [`pages_per_node`] says where each page of a range is, without touching
//!   any: `move_pages(2)` with no target nodes only reports each page's
//!   node; where that call is refused, `get_mempolicy(2)` with
//!   `MPOL_F_NODE | MPOL_F_ADDR`, page by page. [`policy_at`] reads back
//!   the policy of an address (`get_mempolicy(MPOL_F_ADDR)`).
//! - [`pin_current_thread`], [`current_affinity`] and [`current_cpu`]:
//!   `sched_setaffinity(2)`, `sched_getaffinity(2)` and `sched_getcpu(3)` on
//!   the calling thread, with CPU masks of any size.
//!
//! A policy only decides where pages are allocated, so it must be set before
//! the first touch: map fresh memory, apply the policy, then touch every
//! page (the buffer module's placed pools and buffers do exactly that).

use std::collections::BTreeMap;
use std::fmt;
use std::io;

/// `get_mempolicy`: return the node of the page at `addr`, not the policy.
const MPOL_F_NODE: libc::c_ulong = 1;
/// `get_mempolicy`: look at the policy (or page) of `addr`.
const MPOL_F_ADDR: libc::c_ulong = 2;
/// `mbind`: fail (EIO) when a page present in the range is not on the
/// policy's nodes and cannot be moved there.
const MPOL_MF_STRICT: libc::c_uint = 1;
/// `mbind`: move pages present in the range (used by this process only) to
/// the policy's nodes.
const MPOL_MF_MOVE: libc::c_uint = 2;

/// The highest node number accepted. The kernel refuses node masks longer
/// than one page of bits (32768 with 4 KiB pages) and builds for at most
/// 1024 nodes; this bound only keeps a mistyped node from allocating a huge
/// mask.
pub const MAX_NODE: u32 = 32_767;

/// The highest CPU number accepted by [`pin_current_thread`] (the kernel
/// supports up to 8192 CPUs).
pub const MAX_CPU: u32 = 65_535;

/// How a [`MemPolicy`] chooses nodes for new pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemPolicyMode {
    /// Only from the given nodes; allocation fails (or reclaims) when they
    /// are full (`MPOL_BIND`).
    Bind,
    /// From the one given node when it has free memory, else elsewhere
    /// (`MPOL_PREFERRED`).
    Preferred,
    /// Page by page round-robin over the given nodes (`MPOL_INTERLEAVE`).
    Interleave,
    /// From the node of the CPU that allocates (touches) the page
    /// (`MPOL_LOCAL`); takes no nodes.
    Local,
}

impl MemPolicyMode {
    /// `bind`, `preferred`, `interleave`, `local`.
    pub fn name(self) -> &'static str {
        match self {
            MemPolicyMode::Bind => "bind",
            MemPolicyMode::Preferred => "preferred",
            MemPolicyMode::Interleave => "interleave",
            MemPolicyMode::Local => "local",
        }
    }

    /// The kernel's `MPOL_*` value.
    fn raw(self) -> libc::c_int {
        match self {
            MemPolicyMode::Bind => libc::MPOL_BIND,
            MemPolicyMode::Preferred => libc::MPOL_PREFERRED,
            MemPolicyMode::Interleave => libc::MPOL_INTERLEAVE,
            MemPolicyMode::Local => libc::MPOL_LOCAL,
        }
    }
}

/// A NUMA memory policy for a range of memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemPolicy {
    pub mode: MemPolicyMode,
    /// The nodes: one or more for `Bind` and `Interleave`, exactly one for
    /// `Preferred`, none for `Local`.
    pub nodes: Vec<u32>,
}

impl MemPolicy {
    /// Whether the nodes fit the mode, and are in range; the reason if not.
    /// Says nothing about whether the nodes exist ([`place`] checks that).
    pub fn check(&self) -> Result<(), String> {
        match (self.mode, self.nodes.len()) {
            (MemPolicyMode::Local, 0) => {}
            (MemPolicyMode::Local, _) => {
                return Err(format!(
                    "memory policy {self}: local places pages on the node of the CPU that touches them and takes no nodes"
                ))
            }
            (mode, 0) => {
                return Err(format!(
                    "memory policy {}: names no node; give at least one",
                    mode.name()
                ))
            }
            (MemPolicyMode::Preferred, n) if n > 1 => {
                return Err(format!(
                    "memory policy {self}: preferred takes one node (the kernel would use only the first); use interleave or bind for several"
                ))
            }
            _ => {}
        }
        if let Some(&n) = self.nodes.iter().find(|&&n| n > MAX_NODE) {
            return Err(format!(
                "memory policy {self}: node {n} is beyond the largest node number the kernel accepts ({MAX_NODE})"
            ));
        }
        Ok(())
    }
}

/// `bind:0,1`, `preferred:1`, `interleave:0,1,2,3`, `local`.
impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mode.name())?;
        for (i, n) in self.nodes.iter().enumerate() {
            write!(f, "{}{n}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Bits of one word of a kernel bitmask.
const WORD_BITS: usize = libc::c_ulong::BITS as usize;

/// A kernel bitmask (array of `unsigned long`) with `bits` set, just long
/// enough for the largest; one word when `bits` is empty.
fn bitmask(bits: &[u32]) -> Vec<libc::c_ulong> {
    let top = bits.iter().copied().max().unwrap_or(0) as usize;
    let mut mask = vec![0 as libc::c_ulong; top / WORD_BITS + 1];
    for &b in bits {
        let b = b as usize;
        mask[b / WORD_BITS] |= 1 << (b % WORD_BITS);
    }
    mask
}

/// The set bits of a kernel bitmask, ascending.
fn bits_of(mask: &[libc::c_ulong]) -> Vec<u32> {
    let mut out = Vec::new();
    for (w, &word) in mask.iter().enumerate() {
        for b in 0..WORD_BITS {
            if word & (1 << b) != 0 {
                out.push((w * WORD_BITS + b) as u32);
            }
        }
    }
    out
}

/// The node mask and `maxnode` argument of `mbind`/`set_mempolicy` for
/// `nodes`. `maxnode` is one more than the mask's bits: the kernel
/// decrements it before use (see BUGS in `mbind(2)`; libnuma does the same).
fn nodemask(nodes: &[u32]) -> (Vec<libc::c_ulong>, libc::c_ulong) {
    let mask = bitmask(nodes);
    let maxnode = (mask.len() * WORD_BITS + 1) as libc::c_ulong;
    (mask, maxnode)
}

/// The most entries [`parse_list`] gives: far above any kernel's CPU or
/// node count (`NR_CPUS` is at most 8192), so that a list of many large
/// ranges is refused rather than allocated.
pub const MAX_LIST: usize = 1 << 20;

/// Parse a kernel list (`0-3,5,7-8`, as in `/sys/devices/system/node/online`
/// and `cpulist` files); the empty string is the empty list. `None` for
/// anything else, or for more than [`MAX_LIST`] entries before duplicates
/// are dropped.
pub fn parse_list(s: &str) -> Option<Vec<u32>> {
    let s = s.trim();
    let mut out = Vec::new();
    if s.is_empty() {
        return Some(out);
    }
    for part in s.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?);
                if a > b || (b - a) as usize >= MAX_LIST - out.len() {
                    return None;
                }
                out.extend(a..=b);
            }
            None if out.len() < MAX_LIST => out.push(part.parse().ok()?),
            None => return None,
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Write a list as the kernel does: `0-3,5`; `none` when empty.
pub fn format_list(items: &[u32]) -> String {
    let mut v = items.to_vec();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        return "none".to_string();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn read_list(path: &str) -> Option<Vec<u32>> {
    parse_list(&std::fs::read_to_string(path).ok()?)
}

/// The online NUMA nodes (`/sys/devices/system/node/online`); `None` where
/// the kernel has no NUMA support or sysfs is not there.
pub fn online_nodes() -> Option<Vec<u32>> {
    read_list("/sys/devices/system/node/online")
}

/// The nodes with memory (`/sys/devices/system/node/has_memory`): the only
/// ones a policy can place pages on (the kernel silently drops the others
/// from a policy's nodes).
pub fn nodes_with_memory() -> Option<Vec<u32>> {
    read_list("/sys/devices/system/node/has_memory").or_else(online_nodes)
}

/// The online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> Option<Vec<u32>> {
    read_list("/sys/devices/system/cpu/online")
}

/// Give `[addr, addr + len)` the memory policy `policy` with `mbind(2)`,
/// moving pages already present (`MPOL_MF_MOVE`) and failing if one cannot
/// be (`MPOL_MF_STRICT`, EIO). `addr` must be page aligned; the range must
/// be mapped (ENOMEM otherwise). Pages allocated in the range afterwards
/// follow the policy.
///
/// Safe: a policy changes where pages live, never their contents, and
/// migration is invisible to the program. The raw errno comes back as is;
/// [`place`] explains it.
pub fn mbind(addr: *const u8, len: usize, policy: &MemPolicy) -> io::Result<()> {
    policy
        .check()
        .map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
    let (mask, maxnode) = if policy.mode == MemPolicyMode::Local {
        (Vec::new(), 0)
    } else {
        nodemask(&policy.nodes)
    };
    let mask_ptr = if mask.is_empty() {
        std::ptr::null()
    } else {
        mask.as_ptr()
    };
    // SAFETY: mbind reads `maxnode - 1` bits from mask_ptr, which points to
    // `mask`, a live array of exactly that many bits (or is null with
    // maxnode 0), and writes no user memory. It changes only the policy of
    // the range and moves its pages, preserving their contents, so no Rust
    // object can observe it; a range that is not mapped fails with ENOMEM.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr as libc::c_ulong,
            len as libc::c_ulong,
            policy.mode.raw() as libc::c_ulong,
            mask_ptr,
            maxnode,
            (MPOL_MF_STRICT | MPOL_MF_MOVE) as libc::c_ulong,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// [`mbind`], with the nodes checked against those with memory first, and
/// every failure said plainly: which policy, which node, which nodes there
/// are. Errors of kind `InvalidInput` are the caller's (a node that does
/// not exist or has no memory, a malformed policy); `Unsupported` means the
/// kernel has no NUMA support (`ENOSYS`) or refuses the call (`EPERM`).
pub fn place(addr: *const u8, len: usize, policy: &MemPolicy) -> io::Result<()> {
    use io::ErrorKind::{InvalidInput, Unsupported};
    policy
        .check()
        .map_err(|m| io::Error::new(InvalidInput, m))?;
    let with_memory = nodes_with_memory();
    let there = || match &with_memory {
        Some(n) => format!("nodes with memory here: {}", format_list(n)),
        None => "this system lists no NUMA nodes (/sys/devices/system/node)".to_string(),
    };
    if let Some(have) = &with_memory {
        let missing: Vec<u32> = policy
            .nodes
            .iter()
            .copied()
            .filter(|n| !have.contains(n))
            .collect();
        if !missing.is_empty() {
            let s = if missing.len() == 1 { "" } else { "s" };
            return Err(io::Error::new(
                InvalidInput,
                format!(
                    "memory policy {policy}: node{s} {} do{} not exist or ha{} no memory ({})",
                    format_list(&missing),
                    if missing.len() == 1 { "es" } else { "" },
                    if missing.len() == 1 { "s" } else { "ve" },
                    there()
                ),
            ));
        }
    }
    mbind(addr, len, policy).map_err(|e| {
        let (kind, why) = match e.raw_os_error() {
            Some(libc::EINVAL) => (
                InvalidInput,
                format!(
                    "the kernel refused nodes {} ({})",
                    format_list(&policy.nodes),
                    there()
                ),
            ),
            Some(libc::ENOSYS) => (
                Unsupported,
                "this kernel has no NUMA memory policies (CONFIG_NUMA off)".to_string(),
            ),
            Some(libc::EPERM) => (
                Unsupported,
                "not permitted here (a seccomp filter or missing CAP_SYS_NICE: containers often block mbind)".to_string(),
            ),
            Some(libc::EIO) => (
                e.kind(),
                "pages already present could not be moved to the policy's nodes".to_string(),
            ),
            Some(libc::ENOMEM) => (
                e.kind(),
                "not enough memory on the policy's nodes, or the range is not mapped".to_string(),
            ),
            _ => (e.kind(), String::new()),
        };
        let sep = if why.is_empty() { "" } else { ": " };
        io::Error::new(
            kind,
            format!("memory policy {policy}: mbind failed ({e}){sep}{why}"),
        )
    })
}

/// Pages of `[addr, addr + len)` (widened to whole pages) on each node,
/// ascending by node: `(node, pages)`. Pages not present (never touched,
/// or swapped out) are not counted, so the sum can be less than the range.
///
/// Asks `move_pages(2)` with no target nodes, which only reports each
/// page's node and touches nothing. Where that is refused (`ENOSYS`,
/// `EPERM`), falls back to `get_mempolicy(2)` with `MPOL_F_NODE |
/// MPOL_F_ADDR` page by page, which faults a missing page in (read-only:
/// an untouched anonymous page then reads as the shared zero page, counted
/// on that page's node), so measure touched memory only.
pub fn pages_per_node(addr: *const u8, len: usize) -> io::Result<Vec<(u32, u64)>> {
    let page = rustix::param::page_size();
    let start = addr as usize / page * page;
    let end = (addr as usize)
        .checked_add(len)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?
        .next_multiple_of(page);
    let n = (end - start) / page;
    let mut per_node: BTreeMap<u32, u64> = BTreeMap::new();
    const CHUNK: usize = 4096;
    let mut pages: Vec<*mut libc::c_void> = Vec::with_capacity(CHUNK.min(n));
    let mut status: Vec<libc::c_int> = Vec::with_capacity(CHUNK.min(n));
    let mut first = 0;
    while first < n {
        let count = CHUNK.min(n - first);
        pages.clear();
        pages.extend((first..first + count).map(|i| (start + i * page) as *mut libc::c_void));
        status.clear();
        status.resize(count, 0);
        // SAFETY: `pages` holds `count` page addresses and `status` room for
        // `count` ints, both live for the call; with a null node array
        // move_pages moves nothing and only writes each page's node (or
        // -errno) to `status`. pid 0 is this process.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                0 as libc::c_long,
                count as libc::c_ulong,
                pages.as_ptr(),
                std::ptr::null::<libc::c_int>(),
                status.as_mut_ptr(),
                0 as libc::c_long,
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if first == 0 && matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) {
                return pages_per_node_mempolicy(start, n, page);
            }
            return Err(e);
        }
        for &s in &status {
            if let Ok(node) = u32::try_from(s) {
                *per_node.entry(node).or_default() += 1;
            }
        }
        first += count;
    }
    Ok(per_node.into_iter().collect())
}

/// [`pages_per_node`] with `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`, one
/// call per page.
fn pages_per_node_mempolicy(start: usize, n: usize, page: usize) -> io::Result<Vec<(u32, u64)>> {
    let mut per_node: BTreeMap<u32, u64> = BTreeMap::new();
    for i in 0..n {
        let mut node: libc::c_int = -1;
        // SAFETY: get_mempolicy writes one int to `node`, a live local; the
        // node-mask pointer is null with maxnode 0, so nothing else is
        // written. With MPOL_F_ADDR it only reads the page at the address
        // (faulting it in if needed), which changes no contents.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut node as *mut libc::c_int,
                std::ptr::null_mut::<libc::c_ulong>(),
                0 as libc::c_ulong,
                (start + i * page) as libc::c_ulong,
                MPOL_F_NODE | MPOL_F_ADDR,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Ok(node) = u32::try_from(node) {
            *per_node.entry(node).or_default() += 1;
        }
    }
    Ok(per_node.into_iter().collect())
}

/// The memory policy of the page at `addr` (`get_mempolicy(2)` with
/// `MPOL_F_ADDR`): what [`mbind`] set there, or `None` for the default
/// policy (`MPOL_DEFAULT`: the thread's policy, usually local). Reads no
/// memory and faults nothing in. Useful where every page is on one node
/// anyway (a one-node machine), to see that a policy was really applied.
pub fn policy_at(addr: *const u8) -> io::Result<Option<MemPolicy>> {
    // Room for every node a kernel can have (at most 1024).
    let mut mask = vec![0 as libc::c_ulong; 1024 / WORD_BITS];
    let mut mode: libc::c_int = 0;
    // SAFETY: get_mempolicy writes one int to `mode` and at most
    // `maxnode - 1` bits (1024, the length of `mask`) to `mask`, both live
    // and writable; with MPOL_F_ADDR alone it only looks up the policy of
    // the address, touching no memory there.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            (mask.len() * WORD_BITS + 1) as libc::c_ulong,
            addr as libc::c_ulong,
            MPOL_F_ADDR,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // Mode flags (MPOL_F_STATIC_NODES and the like) sit above the mode.
    let nodes = bits_of(&mask);
    let mode = match mode & 0xff {
        libc::MPOL_DEFAULT => return Ok(None),
        libc::MPOL_BIND => MemPolicyMode::Bind,
        libc::MPOL_INTERLEAVE => MemPolicyMode::Interleave,
        // Older kernels record local as preferred with no node.
        libc::MPOL_PREFERRED if nodes.is_empty() => MemPolicyMode::Local,
        // MPOL_PREFERRED_MANY (Linux 5.15+) is preferred with several.
        libc::MPOL_PREFERRED | 5 => MemPolicyMode::Preferred,
        libc::MPOL_LOCAL => MemPolicyMode::Local,
        other => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("unknown memory policy mode {other}"),
            ))
        }
    };
    let nodes = if mode == MemPolicyMode::Local {
        Vec::new()
    } else {
        nodes
    };
    Ok(Some(MemPolicy { mode, nodes }))
}

/// Pin the calling thread to `cpus` (`sched_setaffinity(2)`): it runs only
/// there from now on. Other threads are not affected; threads it spawns
/// later inherit the set.
///
/// Errors (`InvalidInput`) without changing anything when `cpus` is empty
/// or names a CPU that is not online (when `/sys/devices/system/cpu/online`
/// says), and after the call when the kernel granted fewer CPUs than asked
/// (a cpuset or container allows only some of them): the thread is then
/// pinned to those it granted, and the error names the others.
pub fn pin_current_thread(cpus: &[u32]) -> io::Result<()> {
    use io::ErrorKind::InvalidInput;
    if cpus.is_empty() {
        return Err(io::Error::new(InvalidInput, "no CPU to pin the thread to"));
    }
    let want = {
        let mut v = cpus.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    let online = online_cpus();
    let listed = || match &online {
        Some(o) => format!("online CPUs: {}", format_list(o)),
        None => "the online CPUs are unknown".to_string(),
    };
    let absent: Vec<u32> = match &online {
        Some(o) => want.iter().copied().filter(|c| !o.contains(c)).collect(),
        None => want.iter().copied().filter(|&c| c > MAX_CPU).collect(),
    };
    if !absent.is_empty() {
        return Err(io::Error::new(
            InvalidInput,
            format!(
                "cannot pin to CPU {}: not online ({})",
                format_list(&absent),
                listed()
            ),
        ));
    }
    let mask = bitmask(&want);
    // SAFETY: sched_setaffinity reads `len` bytes from `mask`, a live array
    // of exactly that many bytes, and writes no user memory. pid 0 is the
    // calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            0 as libc::c_long,
            std::mem::size_of_val(mask.as_slice()) as libc::c_ulong,
            mask.as_ptr(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            return Err(io::Error::new(
                InvalidInput,
                format!(
                    "cannot pin to CPU {}: this process may not run there (sched_setaffinity: {e}; {})",
                    format_list(&want),
                    listed()
                ),
            ));
        }
        return Err(e);
    }
    let got = current_affinity()?;
    if got != want {
        let refused: Vec<u32> = want.iter().copied().filter(|c| !got.contains(c)).collect();
        return Err(io::Error::new(
            InvalidInput,
            format!(
                "pinned to CPU {} only: CPU {} not allowed for this process (a cpuset or container limits it)",
                format_list(&got),
                format_list(&refused)
            ),
        ));
    }
    Ok(())
}

/// The CPUs the calling thread may run on (`sched_getaffinity(2)`),
/// ascending.
pub fn current_affinity() -> io::Result<Vec<u32>> {
    // The kernel wants room for all of its possible CPUs (EINVAL if less):
    // start at 1024 and grow.
    let mut words = 1024 / WORD_BITS;
    loop {
        let mut mask = vec![0 as libc::c_ulong; words];
        // SAFETY: sched_getaffinity writes at most `len` bytes to `mask`, a
        // live, writable array of exactly that many bytes. pid 0 is the
        // calling thread.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                0 as libc::c_long,
                std::mem::size_of_val(mask.as_slice()) as libc::c_ulong,
                mask.as_mut_ptr(),
            )
        };
        if rc >= 0 {
            // rc bytes were written (the kernel's mask size); the rest is 0.
            return Ok(bits_of(&mask));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) && words * WORD_BITS < (MAX_CPU as usize + 1) {
            words *= 2;
            continue;
        }
        return Err(e);
    }
}

/// The CPU the calling thread runs on now (`sched_getcpu(3)`); by the time
/// it returns the thread may have moved, unless it is pinned to one CPU.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pol(mode: MemPolicyMode, nodes: &[u32]) -> MemPolicy {
        MemPolicy {
            mode,
            nodes: nodes.to_vec(),
        }
    }

    #[test]
    fn nodemask_is_sized_for_the_largest_node() {
        let (m, max) = nodemask(&[0]);
        assert_eq!((m, max), (vec![1], 65));
        let (m, max) = nodemask(&[1, 3]);
        assert_eq!((m, max), (vec![0b1010], 65));
        let (m, max) = nodemask(&[63]);
        assert_eq!((m, max), (vec![1 << 63], 65));
        let (m, max) = nodemask(&[64, 0]);
        assert_eq!((m, max), (vec![1, 1], 129));
        let (m, max) = nodemask(&[200]);
        assert_eq!(m.len(), 4);
        assert_eq!(m[3], 1 << (200 - 192));
        assert_eq!(max, 257);
        assert_eq!(nodemask(&[]).0, vec![0]);
    }

    #[test]
    fn bitmask_round_trips() {
        for set in [vec![], vec![0], vec![1, 5, 64, 65, 1023, 4095]] {
            assert_eq!(bits_of(&bitmask(&set)), set);
        }
    }

    #[test]
    fn lists_parse_and_format_as_the_kernel_writes_them() {
        assert_eq!(parse_list("0\n"), Some(vec![0]));
        assert_eq!(parse_list("0-3,5,7-8"), Some(vec![0, 1, 2, 3, 5, 7, 8]));
        assert_eq!(parse_list(""), Some(vec![]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("a"), None);
        assert_eq!(parse_list("1,,2"), None);
        assert_eq!(format_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(format_list(&[7]), "7");
        assert_eq!(format_list(&[2, 0, 1, 1]), "0-2");
        assert_eq!(format_list(&[]), "none");
    }

    /// Many large ranges are refused, not allocated: 1,024 pieces of a
    /// million each were 4 GiB.
    #[test]
    #[cfg_attr(miri, ignore = "a million entries: hours to interpret")]
    fn long_lists_are_refused_not_allocated() {
        // (is_none, not assert_eq: a failure would print a million numbers)
        let big = vec!["0-1000000"; 1024].join(",");
        assert!(parse_list(&big).is_none());
        assert_eq!(parse_list("0-1048575").map(|v| v.len()), Some(MAX_LIST));
        assert!(parse_list("0-1048576").is_none());
        // Counted before duplicates are dropped.
        assert!(parse_list("0-1048575,5").is_none());
    }

    #[test]
    fn policies_check_their_nodes() {
        use MemPolicyMode::*;
        assert!(pol(Bind, &[0, 1]).check().is_ok());
        assert!(pol(Interleave, &[0, 1]).check().is_ok());
        assert!(pol(Preferred, &[1]).check().is_ok());
        assert!(pol(Local, &[]).check().is_ok());
        assert!(pol(Local, &[0]).check().unwrap_err().contains("no nodes"));
        assert!(pol(Bind, &[]).check().unwrap_err().contains("no node"));
        let e = pol(Preferred, &[0, 1]).check().unwrap_err();
        assert!(e.contains("one node"), "{e}");
        let e = pol(Bind, &[MAX_NODE + 1]).check().unwrap_err();
        assert!(e.contains(&(MAX_NODE + 1).to_string()), "{e}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "move_pages and get_mempolicy: no Miri shim")]
    fn both_ways_of_asking_where_pages_are_agree() {
        let mut buf = crate::buf::AlignedBuf::new(64 << 10, 4096);
        buf.touch();
        let fast = pages_per_node(buf.as_ptr(), buf.len()).unwrap();
        let page = rustix::param::page_size();
        let slow = pages_per_node_mempolicy(buf.as_ptr() as usize, buf.len() / page, page);
        assert_eq!(fast, slow.unwrap());
        let total: u64 = fast.iter().map(|&(_, p)| p).sum();
        assert_eq!(total, (buf.len() / page) as u64);
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap and move_pages: no Miri shim")]
    fn untouched_pages_are_not_counted() {
        let len = 16 * rustix::param::page_size();
        // SAFETY: a fresh private anonymous mapping, never accessed; only
        // its address is used, and it is unmapped below.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(raw, libc::MAP_FAILED);
        let got = pages_per_node(raw as *const u8, len);
        // SAFETY: raw and len are exactly the mapping made above.
        unsafe { libc::munmap(raw, len) };
        assert_eq!(got.unwrap(), vec![]);
    }

    #[test]
    fn policies_display_as_mode_and_nodes() {
        use MemPolicyMode::*;
        assert_eq!(pol(Bind, &[0, 1]).to_string(), "bind:0,1");
        assert_eq!(pol(Preferred, &[1]).to_string(), "preferred:1");
        assert_eq!(pol(Interleave, &[2, 3]).to_string(), "interleave:2,3");
        assert_eq!(pol(Local, &[]).to_string(), "local");
    }
}
