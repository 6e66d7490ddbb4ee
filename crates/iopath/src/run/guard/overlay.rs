//! A file on overlayfs is also the file it is in each of the overlay's
//! layers: `stat` gives the overlay's device with the layer file's inode,
//! and writing the layer's file (upperdir) writes what the overlay shows,
//! and the reverse. Its other identities are found from
//! `/proc/self/mountinfo`: the overlay's mount point, its super options
//! `upperdir=` and `lowerdir=` (`lowerdir+=`, `datadir+=`), and the file's
//! path under the mount point `stat`ed in each layer; a layer may itself
//! be on an overlay (nested), followed [`MAX_DEPTH`] deep.
//!
//! The kernel keeps a layer's path as it was given at mount time: a
//! relative one (`mount -o upperdir=ov/u`) cannot be resolved, and that
//! overlay is reported *unresolved*, for the caller to refuse when unsure.

use std::path::{Path, PathBuf};

use super::identity::FileId;

/// How many overlays deep layers are followed.
pub const MAX_DEPTH: usize = 8;

/// One line of `/proc/self/mountinfo`: mount point, type, source and super
/// options (unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountLine {
    /// `maj:min` of the mounted file system (an overlay's is anonymous).
    pub dev: (u32, u32),
    pub at: String,
    pub fstype: String,
    pub source: String,
    pub opts: String,
}

/// The mounts of `mountinfo`, in its order (a later mount on the same
/// point hides an earlier one).
pub fn mount_lines(mountinfo: &str) -> Vec<MountLine> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mut r = right.split(' ');
            let fstype = r.next()?.to_string();
            let source = super::unescape(r.next()?);
            let opts = super::unescape(r.next().unwrap_or(""));
            let mut f = left.split(' ');
            let dev = super::parse_dev(f.nth(2)?)?;
            let at = super::unescape(f.nth(1)?);
            Some(MountLine {
                dev,
                at,
                fstype,
                source,
                opts,
            })
        })
        .collect()
}

/// The mount `path` (absolute, canonical) is on: the longest mount point
/// above it, the latest one of equal length.
pub fn mount_of<'a>(path: &Path, mounts: &'a [MountLine]) -> Option<&'a MountLine> {
    mounts
        .iter()
        .filter(|m| path.starts_with(&m.at))
        .max_by_key(|m| m.at.len())
        .and_then(|best| mounts.iter().rev().find(|m| m.at == best.at))
}

/// An overlay's layer directories (upper, lower and data-only ones), in
/// the order its super options name them.
pub fn layers(opts: &str) -> Vec<String> {
    let mut out = Vec::new();
    for opt in opts.split(',') {
        if let Some(dir) = opt.strip_prefix("upperdir=") {
            out.push(dir.to_string());
        } else if let Some(list) = opt.strip_prefix("lowerdir=") {
            out.extend(list.split(':').filter(|d| !d.is_empty()).map(String::from));
        } else if let Some(dir) = opt
            .strip_prefix("lowerdir+=")
            .or_else(|| opt.strip_prefix("datadir+="))
        {
            out.push(dir.to_string());
        }
    }
    out
}

/// The identities of the file at `path` in the layers of the overlays it
/// is on (not its own), and the mount points of overlays on its way whose
/// layers could not be resolved (named by relative paths).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Layered {
    pub ids: Vec<FileId>,
    pub unresolved: Vec<String>,
}

/// [`Layered`] for `path`; nothing when it is not on an overlay.
pub fn layer_identities(path: &Path, mounts: &[MountLine]) -> Layered {
    let mut out = Layered::default();
    expand(path, mounts, MAX_DEPTH, &mut out);
    out
}

fn expand(path: &Path, mounts: &[MountLine], depth: usize, out: &mut Layered) {
    let Ok(canon) = std::fs::canonicalize(path) else {
        return;
    };
    let Some(m) = mount_of(&canon, mounts).filter(|m| m.fstype == "overlay") else {
        return;
    };
    let Ok(rel) = canon.strip_prefix(&m.at) else {
        return;
    };
    if depth == 0 {
        out.unresolved.push(m.at.clone());
        return;
    }
    for layer in layers(&m.opts) {
        if !layer.starts_with('/') {
            if !out.unresolved.contains(&m.at) {
                out.unresolved.push(m.at.clone());
            }
            continue;
        }
        let p: PathBuf = Path::new(&layer).join(rel);
        if let Some(id) = FileId::at(&p) {
            if !out.ids.contains(&id) {
                out.ids.push(id);
            }
            expand(&p, mounts, depth - 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlays_layers_are_read_from_its_super_options() {
        let mi = "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
                  46 22 0:39 / /srv/ov\\040m rw - overlay overlay rw,lowerdir=/l1:/l2::/d,upperdir=/u,workdir=/w,uuid=on\n\
                  47 22 0:40 / /srv/x rw - overlay overlay rw,lowerdir+=/a,datadir+=/b\n";
        let m = mount_lines(mi);
        assert_eq!((m[1].dev, m[1].at.as_str()), ((0, 39), "/srv/ov m"));
        assert_eq!(layers(&m[1].opts), ["/l1", "/l2", "/d", "/u"]);
        assert_eq!(layers(&m[2].opts), ["/a", "/b"]);
        let on = mount_of(Path::new("/srv/ov m/img"), &m).unwrap();
        assert_eq!(on.fstype, "overlay");
        assert_eq!(mount_of(Path::new("/srv/ov mx"), &m).unwrap().at, "/");
    }
}
