//! Issue 26, item 1: the guards ask "is this the file behind that loop
//! device, mount or swap" by identity (device and inode), never by name. A
//! hard link of a loop device's backing file, whose original name was
//! removed, used to be written while its file system was mounted, and
//! corrupted it. Here on loop devices and mounts these tests make (and
//! always undo); skipped, with the reason printed, where the machine
//! refuses them (not root, no losetup, no mkfs.ext4).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::block::{Loop, Mount};
use common::{iopath, scratch};

/// An ext4 image of 16 MiB in `dir`, fully initialised (no lazy init
/// thread writing it later): `None` (reason printed) without mkfs.ext4.
fn ext4_image(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(&p)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(p),
        Ok(o) => {
            common::skip(format!(
                "mkfs.ext4 failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            None
        }
        Err(e) => {
            common::skip(format!("cannot run mkfs.ext4: {e}"));
            None
        }
    }
}

/// The device mounted at `at` (`/dev/loop3` for `mount -o loop`).
fn source_of(at: &Path) -> String {
    let at = std::fs::canonicalize(at).unwrap();
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            (left.split(' ').nth(4)? == at.to_str()?)
                .then(|| right.split(' ').nth(1).unwrap().to_string())
        })
        .expect("the mount is listed")
}

/// `iopath run --file FILE --allow-write` with random O_DIRECT writes, as
/// issue 26 reproduced it.
fn write_run(file: &Path) -> std::process::Output {
    iopath()
        .args(["run", "--file"])
        .arg(file)
        .args([
            "--allow-write",
            "--patterns",
            "randwrite",
            "--methods",
            "direct",
            "--size",
            "8M",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap()
}

/// The run is refused as bad input (exit 2), naming `dev` as the loop
/// device the file backs, and `file`'s bytes are those of `before`.
fn assert_refused(out: &std::process::Output, dev: &str, file: &Path, before: &[u8]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("backing file of") && err.contains(dev),
        "names {dev}: {err}"
    );
    assert!(err.contains("losetup -d"), "says what to do: {err}");
    assert!(
        std::fs::read(file).unwrap() == before,
        "{} was written",
        file.display()
    );
}

/// Flush what the mount wrote (its superblock, at mount time) to the image
/// before its bytes are taken.
fn settle() {
    let _ = Command::new("sync").status();
}

#[test]
fn hard_link_of_a_mounted_images_deleted_backing_file_is_refused() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "fs.img") else {
        return;
    };
    let hl = dir.path().join("fs.hl");
    std::fs::hard_link(&img, &hl).unwrap();
    let mnt = tempfile::tempdir_in(dir.path()).unwrap();
    let Some(_m) = Mount::new(&img, mnt.path(), &["-o", "loop"]) else {
        return;
    };
    let dev = source_of(mnt.path());
    std::fs::remove_file(&img).unwrap();
    settle();
    let before = std::fs::read(&hl).unwrap();
    let out = write_run(&hl);
    let name = dev.trim_start_matches("/dev/");
    assert_refused(&out, name, &hl, &before);
}

#[test]
fn hard_link_of_a_mounted_images_backing_file_is_refused_while_its_name_exists() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "fs.img") else {
        return;
    };
    let hl = dir.path().join("fs.hl");
    std::fs::hard_link(&img, &hl).unwrap();
    let mnt = tempfile::tempdir_in(dir.path()).unwrap();
    let Some(_m) = Mount::new(&img, mnt.path(), &["-o", "loop"]) else {
        return;
    };
    let dev = source_of(mnt.path());
    settle();
    let before = std::fs::read(&hl).unwrap();
    let out = write_run(&hl);
    assert_refused(&out, dev.trim_start_matches("/dev/"), &hl, &before);
}

#[test]
fn hard_link_of_an_unmounted_loop_devices_deleted_backing_file_is_refused() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "plain.img") else {
        return;
    };
    let hl = dir.path().join("plain.hl");
    std::fs::hard_link(&img, &hl).unwrap();
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    std::fs::remove_file(&img).unwrap();
    let before = std::fs::read(&hl).unwrap();
    let out = write_run(&hl);
    assert_refused(&out, &lo.name(), &hl, &before);
}

/// The other way round: a new file put under the removed name of a loop
/// device's backing file is another file, and may be written (it used to
/// be refused, taken by name for the loop device's).
#[test]
fn a_new_file_under_a_deleted_backing_files_name_may_be_written() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "gone.img") else {
        return;
    };
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    std::fs::remove_file(&img).unwrap();
    std::fs::write(&img, vec![7u8; 8 << 20]).unwrap();
    let out = write_run(&img);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains(&lo.name()), "{err}");
}

/// A loop device over a hard link of another loop device's deleted
/// backing file writes the same blocks: writing it is refused, naming the
/// other, even with --force-signature.
#[test]
fn a_loop_device_over_a_hard_link_of_a_mounted_images_file_is_refused() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "twin.img") else {
        return;
    };
    let hl = dir.path().join("twin.hl");
    std::fs::hard_link(&img, &hl).unwrap();
    let mnt = tempfile::tempdir_in(dir.path()).unwrap();
    let Some(_m) = Mount::new(&img, mnt.path(), &["-o", "loop"]) else {
        return;
    };
    let dev = source_of(mnt.path());
    std::fs::remove_file(&img).unwrap();
    let Some(twin) = Loop::attach(&hl, false) else {
        return;
    };
    settle();
    let before = std::fs::read(&hl).unwrap();
    let out = iopath()
        .args(["run", "--file"])
        .arg(twin.path())
        .args([
            "--allow-write",
            "--force-signature",
            "--patterns",
            "randwrite",
            "--methods",
            "direct",
            "--size",
            "8M",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(dev.trim_start_matches("/dev/")) && err.contains("no option overrides"),
        "{err}"
    );
    assert!(
        std::fs::read(&hl).unwrap() == before,
        "the image was written"
    );
}

/// A regular file that is active swap, and a hard link of it, are refused
/// for writes (the kernel would fail them with ETXTBSY mid-run).
#[test]
fn hard_link_of_an_active_swap_file_is_refused() {
    let dir = scratch();
    let swap = dir.path().join("swap.img");
    std::fs::write(&swap, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&swap, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let hl = dir.path().join("swap.hl");
    std::fs::hard_link(&swap, &hl).unwrap();
    let made = Command::new("mkswap").arg(&swap).output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        common::skip(format!("mkswap failed: {made:?}"));
        return;
    }
    let on = Command::new("swapon").arg(&swap).output().unwrap();
    if !on.status.success() {
        common::skip_anyway(format!(
            "swapon {} failed: {}",
            swap.display(),
            String::from_utf8_lossy(&on.stderr).trim()
        ));
        return;
    }
    struct Off(PathBuf);
    impl Drop for Off {
        fn drop(&mut self) {
            let _ = Command::new("swapoff").arg(&self.0).status();
        }
    }
    let _off = Off(swap.clone());
    let out = write_run(&hl);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("active swap") && err.contains("swapoff"),
        "{err}"
    );
}

/// An overlay of `dir`/ov (layers l, u, w mounted at m, absolute paths)
/// holding an ext4 image `img` in its upper layer: the mount, and the
/// image's paths through the overlay and in the upper layer.
fn overlay_with_image(dir: &Path) -> Option<(BareMount, PathBuf, PathBuf)> {
    let ov = dir.join("ov");
    for d in ["l", "u", "w", "m"] {
        std::fs::create_dir_all(ov.join(d)).unwrap();
    }
    let upper = ext4_image(&ov.join("u"), "img")?;
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        ov.join("l").display(),
        ov.join("u").display(),
        ov.join("w").display()
    );
    let m = Mount::new("overlay", &ov.join("m"), &["-t", "overlay", "-o", &opts])?;
    // Unmounted lazily if a loop device being detached still holds it.
    std::mem::forget(m);
    Some((BareMount(ov.join("m")), ov.join("m/img"), upper))
}

/// Issue: an image loop-mounted through an overlay was written through
/// its file in the overlay's upper layer (same inode, another device).
#[test]
fn upper_layer_file_of_a_loop_mounted_overlay_image_is_refused() {
    let dir = scratch();
    let Some((_ov, through, upper)) = overlay_with_image(dir.path()) else {
        return;
    };
    let mnt = dir.path().join("m4");
    std::fs::create_dir(&mnt).unwrap();
    let Some(lo) = Loop::attach(&through, false) else {
        return;
    };
    let Some(_m) = Mount::new(lo.path(), &mnt, &[]) else {
        return;
    };
    settle();
    let before = std::fs::read(&upper).unwrap();
    assert_refused(&write_run(&upper), &lo.name(), &upper, &before);
}

/// The other way round: a loop device over the upper layer's file, and
/// the same file written through the overlay.
#[test]
fn overlay_path_of_a_loop_backed_upper_layer_file_is_refused() {
    let dir = scratch();
    let Some((_ov, through, upper)) = overlay_with_image(dir.path()) else {
        return;
    };
    let Some(lo) = Loop::attach(&upper, false) else {
        return;
    };
    let before = std::fs::read(&upper).unwrap();
    assert_refused(&write_run(&through), &lo.name(), &upper, &before);
}

/// base.img → loop A → loop B, B mounted: refusing base.img names B and
/// its mount point, and detaching B first.
#[test]
fn refusal_of_a_loop_under_a_loop_names_the_stacked_loop_and_its_mount() {
    let dir = scratch();
    let Some(img) = ext4_image(dir.path(), "base.img") else {
        return;
    };
    let Some(a) = Loop::attach(&img, false) else {
        return;
    };
    let Some(b) = Loop::attach(a.path(), false) else {
        return;
    };
    let mnt = dir.path().join("m2");
    std::fs::create_dir(&mnt).unwrap();
    let Some(_m) = Mount::new(b.path(), &mnt, &[]) else {
        return;
    };
    settle();
    let before = std::fs::read(&img).unwrap();
    let out = write_run(&img);
    assert_refused(&out, &a.name(), &img, &before);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&b.name()), "names {}: {err}", b.name());
    assert!(
        err.contains(mnt.to_str().unwrap()),
        "names the mount: {err}"
    );
    let detach = format!("losetup -d {} {}", b.path().display(), a.path().display());
    assert!(err.contains(&detach), "{detach}: {err}");
}

/// A mount made by a bare mount(2) (no loop device: erofs mounts a
/// regular file itself on Linux 6.12+), through python3's ctypes;
/// unmounted when dropped (lazily when still busy: a loop device just
/// detached may hold it a moment longer).
struct BareMount(PathBuf);

impl BareMount {
    fn new(src: &Path, at: &Path, fstype: &str) -> Option<BareMount> {
        let script = "import ctypes,os,sys\n\
                      l=ctypes.CDLL(None,use_errno=True)\n\
                      r=l.mount(sys.argv[1].encode(),sys.argv[2].encode(),sys.argv[3].encode(),1,None)\n\
                      sys.exit(os.strerror(ctypes.get_errno()) if r else 0)";
        let out = Command::new("python3")
            .args(["-c", script])
            .arg(src)
            .arg(at)
            .arg(fstype)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(BareMount(at.to_path_buf())),
            other => {
                common::skip(format!("cannot mount {fstype} from a file: {other:?}"));
                None
            }
        }
    }
}

impl Drop for BareMount {
    fn drop(&mut self) {
        let done = Command::new("umount").arg(&self.0).status();
        if !done.is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Issue: a file-backed mount's source is the name the image had at mount
/// time; once the image is moved, a hard link of it was written, and the
/// mounted file system damaged.
#[test]
fn hard_link_of_a_moved_file_backed_erofs_image_is_refused() {
    let dir = scratch();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("data"), vec![5u8; 12 << 20]).unwrap();
    let img = dir.path().join("ero.img");
    let made = Command::new("mkfs.erofs")
        .arg("--quiet")
        .arg(&img)
        .arg(&src)
        .output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        common::skip(format!("mkfs.erofs failed: {made:?}"));
        return;
    }
    let me = dir.path().join("me");
    std::fs::create_dir(&me).unwrap();
    let Some(_m) = BareMount::new(&img, &me, "erofs") else {
        return;
    };
    let moved = dir.path().join("ero.moved");
    std::fs::rename(&img, &moved).unwrap();
    let hl = dir.path().join("ero.hl");
    std::fs::hard_link(&moved, &hl).unwrap();
    let before = std::fs::read(&hl).unwrap();
    let out = write_run(&hl);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(me.to_str().unwrap()) && err.contains("umount"),
        "names the mount and what to do: {err}"
    );
    assert!(
        std::fs::read(&hl).unwrap() == before,
        "the image was written"
    );
}

/// An overlay mounted with relative layer paths (as `mount -o
/// upperdir=ov/u` keeps them): its layers cannot be found, and the file
/// through it, with its upper file's inode number, is refused as unsure.
#[test]
fn upper_layer_file_under_an_overlay_with_relative_layers_is_refused() {
    let dir = scratch();
    for d in ["l", "u", "w", "m"] {
        std::fs::create_dir_all(dir.path().join("ov").join(d)).unwrap();
    }
    let Some(upper) = ext4_image(&dir.path().join("ov/u"), "img") else {
        return;
    };
    let at = dir.path().join("ov/m");
    let made = Command::new("mount")
        .current_dir(dir.path())
        .args(["-t", "overlay", "overlay", "-o"])
        .arg("lowerdir=ov/l,upperdir=ov/u,workdir=ov/w")
        .arg(&at)
        .output()
        .unwrap();
    if !made.status.success() {
        common::skip(format!("mount -t overlay failed: {made:?}"));
        return;
    }
    let _ov = BareMount(at.clone());
    let Some(lo) = Loop::attach(&at.join("img"), false) else {
        return;
    };
    let before = std::fs::read(&upper).unwrap();
    let out = write_run(&upper);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&lo.name()) && err.contains(at.to_str().unwrap()),
        "names the loop device and the overlay: {err}"
    );
    assert!(
        std::fs::read(&upper).unwrap() == before,
        "the image was written"
    );
}

/// A loop device over an overlay's file whose name was then removed: the
/// kernel gives the overlay's device and the layer file's inode, and no
/// name is left to find its layers by; a hard link in the upper layer,
/// with that inode number, is refused as unsure.
#[test]
fn hard_link_in_the_upper_layer_of_a_removed_overlay_backing_file_is_refused() {
    let dir = scratch();
    let Some((_ov, through, upper)) = overlay_with_image(dir.path()) else {
        return;
    };
    let hl = upper.with_file_name("img.hl");
    std::fs::hard_link(&upper, &hl).unwrap();
    let Some(lo) = Loop::attach(&through, false) else {
        return;
    };
    std::fs::remove_file(&through).unwrap();
    let before = std::fs::read(&hl).unwrap();
    let out = write_run(&hl);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&lo.name()), "names {}: {err}", lo.name());
    assert!(
        std::fs::read(&hl).unwrap() == before,
        "the image was written"
    );
}
