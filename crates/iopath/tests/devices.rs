//! Block devices as targets, on loop devices this test creates (and always
//! detaches, on failure too): the write guards (mounted, held, signatures)
//! and the description of a device. Skipped, with the reason printed, where
//! the machine refuses loop devices or mounts (not root, no losetup).
//! Only devices made here are ever written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::block::{Loop, Mount};
use common::{iopath, json_of, scratch};
use predicates::prelude::*;

/// A sparse image of `mib` MiB in `dir`.
fn image(dir: &Path, name: &str, mib: u64) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(mib << 20).unwrap();
    p
}

/// Run `tool ARGS`; `false` (reason printed) when it is missing or fails.
fn tool(name: &str, args: &[&str], dev: &Path) -> bool {
    match Command::new(name).args(args).arg(dev).output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            crate::common::skip(format!(
                "{name} {} failed: {}",
                dev.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            false
        }
        Err(e) => {
            crate::common::skip(format!("cannot run {name}: {e}"));
            false
        }
    }
}

/// `iopath run --file DEV --allow-write` writing 4 MiB once, with `extra`
/// (DEV may be a regular file too).
fn write_run(dev: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    iopath()
        .args(["run", "--file"])
        .arg(dev)
        .args([
            "--allow-write",
            "--size",
            "4M",
            "--patterns",
            "write",
            "--methods",
            "buffered",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .args(extra)
        .assert()
}

/// An MBR with one Linux partition from sector 2048 over `sectors` sectors.
fn write_mbr(img: &Path, sectors: u32) {
    use std::os::unix::fs::FileExt;
    let mut mbr = [0u8; 512];
    let e = &mut mbr[446..462];
    e[4] = 0x83;
    e[8..12].copy_from_slice(&2048u32.to_le_bytes());
    e[12..16].copy_from_slice(&sectors.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    let f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.write_all_at(&mbr, 0).unwrap();
}

#[test]
fn a_blank_loop_device_is_written_only_with_allow_write() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "plain.img", 16), false) else {
        return;
    };
    iopath()
        .args(["run", "--file"])
        .arg(lo.path())
        .args(["--patterns", "write", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--allow-write"));
    write_run(lo.path(), &[]).success();
}

#[test]
fn an_ext4_device_is_refused_unless_forced() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "ext4.img", 16), false) else {
        return;
    };
    if !tool("mkfs.ext4", &["-q", "-F"], lo.path()) {
        return;
    }
    write_run(lo.path(), &[])
        .code(2)
        .stderr(predicate::str::contains("carries an ext2/3/4 signature"))
        .stderr(predicate::str::contains("--force-signature"));
    // Reading it is fine.
    iopath()
        .args(["run", "--file"])
        .arg(lo.path())
        .args([
            "--size",
            "4M",
            "--patterns",
            "read",
            "--methods",
            "buffered",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .assert()
        .success();
    write_run(lo.path(), &["--force-signature"]).success();
}

#[test]
fn a_swap_signature_is_refused() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "swap.img", 16), false) else {
        return;
    };
    if !tool("mkswap", &[], lo.path()) {
        return;
    }
    write_run(lo.path(), &[])
        .code(2)
        .stderr(predicate::str::contains("swap signature"));
}

#[test]
fn a_partitioned_device_with_a_mounted_partition_is_refused() {
    let dir = scratch();
    let img = image(dir.path(), "parted.img", 40);
    write_mbr(&img, 32 << 11);
    let Some(lo) = Loop::attach(&img, true) else {
        return;
    };
    let Some(part) = lo.partition(1) else { return };
    if !tool("mkfs.ext4", &["-q", "-F"], &part) {
        return;
    }
    // Unmounted: the disk carries an MBR, the partition ext4.
    write_run(lo.path(), &[])
        .code(2)
        .stderr(predicate::str::contains("MBR signature"));
    write_run(&part, &[])
        .code(2)
        .stderr(predicate::str::contains("ext2/3/4 signature"));
    let mnt = tempfile::tempdir().unwrap();
    let Some(_m) = Mount::new(&part, mnt.path(), &[]) else {
        return;
    };
    let part_name = part.file_name().unwrap().to_string_lossy().into_owned();
    // The whole disk of a mounted partition, and the partition itself:
    // refused even when forced.
    for dev in [lo.path(), part.as_path()] {
        write_run(dev, &["--force-signature"])
            .code(2)
            .stderr(predicate::str::contains(format!(
                "{part_name} is mounted at {}",
                mnt.path().display()
            )))
            .stderr(predicate::str::contains("no option overrides"));
    }
}

#[test]
fn a_device_backing_another_loop_device_is_refused() {
    let dir = scratch();
    let Some(lower) = Loop::attach(&image(dir.path(), "lower.img", 16), false) else {
        return;
    };
    let Some(upper) = Loop::attach(lower.path(), false) else {
        return;
    };
    write_run(lower.path(), &["--force-signature"])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is held by {}",
            lower.name(),
            upper.name()
        )));
    // The upper one is not held: it may be written.
    write_run(upper.path(), &[]).success();
}

#[test]
fn force_signature_and_prefill_need_allow_write() {
    for flag in ["--force-signature", "--prefill"] {
        iopath()
            .args(["run", "--file", "/dev/null", "--patterns", "read", flag])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--allow-write"));
    }
}

/// The JSON of a run on a device: described as a block device, no file
/// system.
#[test]
fn a_loop_device_is_described_as_a_block_device() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "desc.img", 16), false) else {
        return;
    };
    let out = iopath()
        .args(["run", "--file"])
        .arg(lo.path())
        .args([
            "--size",
            "4M",
            "--patterns",
            "read",
            "--methods",
            "buffered",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--json",
            "-",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json_of(&out.stdout);
    assert_eq!(j["target"]["kind"], "block-device", "{}", j["target"]);
    assert!(j["system"]["fs_type"].is_null(), "{}", j["system"]);
    assert_eq!(j["system"]["device"]["name"], lo.name().as_str());
    assert_eq!(j["system"]["device"]["size_bytes"], 16u64 << 20);
}

/// `iopath run ARGS --repeat 1 --json - --quiet`, which must succeed.
fn json_run(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = iopath()
        .arg("run")
        .args(args)
        .args(["--time", "50ms", "--repeat", "1", "--json", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

fn codes(j: &serde_json::Value) -> Vec<String> {
    j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// A loop device over a sparse file reads holes: said, until --prefill
/// writes them (and the backing file is then allocated).
#[test]
fn a_sparse_loop_device_is_warned_about_and_prefill_fills_it() {
    let dir = scratch();
    let img = image(dir.path(), "sparse.img", 16);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let read = |extra: &[&str]| {
        let mut a: Vec<&std::ffi::OsStr> = vec!["--file".as_ref(), lo.path().as_os_str()];
        a.extend(
            [
                "--size",
                "4M",
                "--patterns",
                "randread",
                "--methods",
                "direct",
            ]
            .iter()
            .chain(extra)
            .map(|s| std::ffi::OsStr::new(*s)),
        );
        json_run(&a)
    };
    let j = read(&[]);
    assert!(
        codes(&j).contains(&"unwritten_device_ranges".to_string()),
        "{:?}",
        codes(&j)
    );
    let j = read(&["--allow-write", "--prefill"]);
    assert!(
        !codes(&j).contains(&"unwritten_device_ranges".to_string()),
        "{:?}",
        codes(&j)
    );
    assert_eq!(j["target"]["prefilled"], true);
    use std::os::unix::fs::MetadataExt;
    let allocated = std::fs::metadata(&img).unwrap().blocks() * 512;
    assert!(allocated >= 4 << 20, "{allocated} bytes allocated");
}

/// A partition named as the target is counted by its own stat.
#[test]
fn a_partition_is_counted_by_its_own_stat() {
    let dir = scratch();
    let img = image(dir.path(), "counted.img", 24);
    write_mbr(&img, 16 << 11);
    let Some(lo) = Loop::attach(&img, true) else {
        return;
    };
    let Some(part) = lo.partition(1) else { return };
    let j = json_run(&[
        "--file".as_ref(),
        part.as_os_str(),
        "--size".as_ref(),
        "4M".as_ref(),
        "--patterns".as_ref(),
        "read".as_ref(),
        "--methods".as_ref(),
        "direct".as_ref(),
    ]);
    let name = part.file_name().unwrap().to_str().unwrap();
    let st = &j["system"]["device_stack"];
    assert_eq!(st["top"], name, "{st}");
    assert_eq!(st["leaves"], serde_json::json!([name]), "{st}");
    // Described as the partition (its 16 MiB, not the disk's 24), its
    // parent disk named (review of issue 14).
    let d = &j["system"]["device"];
    assert_eq!(d["partition"], name);
    assert_eq!(d["name"], lo.name().as_str());
    assert_eq!(d["size_bytes"], 16u64 << 20, "{d}");
    assert_eq!(d["disk_size_bytes"], 24u64 << 20, "{d}");
}

/// What is stacked above a target is part of its description: a loop
/// device over another (review of issue 14: not listed before). Reading
/// the lower one is allowed; the table names the holder too.
#[test]
fn the_devices_stacked_above_a_target_are_listed() {
    let dir = scratch();
    let Some(lower) = Loop::attach(&image(dir.path(), "held.img", 16), false) else {
        return;
    };
    let Some(upper) = Loop::attach(lower.path(), false) else {
        return;
    };
    let out = iopath()
        .args(["run", "--file"])
        .arg(lower.path())
        .args([
            "--size",
            "4M",
            "--patterns",
            "read",
            "--methods",
            "buffered",
            "--time",
            "50ms",
            "--repeat",
            "1",
            // The target line in full (its holders): the whole report.
            "--explain",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let j = json_of(&out.stdout);
    assert_eq!(
        j["system"]["device"]["holders"],
        serde_json::json!([{"name": upper.name(), "over": lower.name()}]),
        "{}",
        j["system"]["device"]
    );
    assert!(
        err.contains(&format!("held by {} (on {})", upper.name(), lower.name())),
        "{err}"
    );
    // The upper device has nothing above it.
    let j = json_run(&[
        "--file".as_ref(),
        upper.path().as_os_str(),
        "--size".as_ref(),
        "4M".as_ref(),
        "--patterns".as_ref(),
        "read".as_ref(),
        "--methods".as_ref(),
        "buffered".as_ref(),
    ]);
    assert_eq!(j["system"]["device"]["holders"], serde_json::json!([]));
}

/// btrfs gives files an anonymous st_dev (0:N): the device is found from
/// the mount's source, and the write guard sees the device as mounted.
#[test]
fn a_btrfs_mount_is_traced_to_its_device() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "btrfs.img", 256), false) else {
        return;
    };
    if !tool("mkfs.btrfs", &["-q", "-f"], lo.path()) {
        return;
    }
    let mnt = tempfile::tempdir().unwrap();
    let Some(_m) = Mount::new(lo.path(), mnt.path(), &[]) else {
        return;
    };
    let (maj, _) = iopath_io::sys::dev_numbers(mnt.path()).unwrap();
    assert_eq!(maj, 0, "btrfs st_dev is expected to be anonymous");
    let j = json_run(&[
        "--dir".as_ref(),
        mnt.path().as_os_str(),
        "--size".as_ref(),
        "4M".as_ref(),
        "--patterns".as_ref(),
        "read".as_ref(),
        "--methods".as_ref(),
        "direct".as_ref(),
    ]);
    assert_eq!(j["system"]["fs_type"], "btrfs");
    assert_eq!(j["system"]["device"]["name"], lo.name().as_str());
    assert_eq!(j["system"]["device_stack"]["top"], lo.name().as_str());
    assert!(!codes(&j).contains(&"no_block_device".to_string()));
    write_run(lo.path(), &["--force-signature"])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is mounted at",
            lo.name()
        )));
}

/// ucache reads a block device: its size is the device's end, not
/// fstat's 0 (before, every read returned 0 bytes and the probe called
/// ucache unusable on devices).
#[test]
fn ucache_reads_a_block_device() {
    let dir = scratch();
    let img = image(dir.path(), "ucache.img", 16);
    // Data, so that the reads move real bytes.
    std::fs::write(&img, vec![0x5au8; 16 << 20]).unwrap();
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let j = json_run(&[
        "--file".as_ref(),
        lo.path().as_os_str(),
        "--methods".as_ref(),
        "ucache".as_ref(),
        "--patterns".as_ref(),
        "read,randread".as_ref(),
        "--ucache-size".as_ref(),
        "4M".as_ref(),
    ]);
    for c in j["cases"].as_array().unwrap() {
        assert!(c["skipped"].is_null(), "{c}");
        assert!(c["error"].is_null(), "{c}");
        assert!(c["summary"]["read_bytes"].as_u64().unwrap() > 0, "{c}");
    }
    assert_eq!(
        std::fs::metadata(&img).unwrap().len(),
        16 << 20,
        "never cut"
    );
}

/// Review of issue 14: a mounted file system reached through a second
/// loop device over its image, or through the image itself, is never
/// written, whatever the flags; nor a LUKS volume without
/// --force-signature; and a device being written is held O_EXCL.
#[test]
fn a_mounted_file_system_is_safe_from_its_image_and_its_twin_loop() {
    let dir = scratch();
    let img = image(dir.path(), "twin.img", 64);
    if !tool("mkfs.ext4", &["-q", "-F"], &img) {
        return;
    }
    let Some(first) = Loop::attach(&img, false) else {
        return;
    };
    let mnt = tempfile::tempdir().unwrap();
    let Some(_m) = Mount::new(first.path(), mnt.path(), &[]) else {
        return;
    };
    let Some(twin) = Loop::attach(&img, false) else {
        return;
    };
    write_run(twin.path(), &["--force-signature"])
        .code(2)
        .stderr(predicate::str::contains(first.name()));
    // The image file itself, as a regular --file.
    write_run(&img, &[])
        .code(2)
        .stderr(predicate::str::contains("backing file of"));
    // The mounted device cannot be held exclusively.
    assert!(iopath::run::guard::hold_exclusively(first.path(), first.path()).is_err());
    assert!(
        iopath::run::guard::hold_exclusively(twin.path(), twin.path()).is_ok(),
        "the twin is not mounted itself"
    );
}

/// Review of issue 14: the twin-loop guard read `loop/backing_file` of the
/// partition's own name (absent), so a partition of one loop device was
/// written while the same partition, through another loop device over the
/// same image, was mounted.
#[test]
fn a_partition_whose_twin_is_mounted_is_refused() {
    let dir = scratch();
    let img = image(dir.path(), "twinpart.img", 40);
    write_mbr(&img, 32 << 11);
    let Some(first) = Loop::attach(&img, true) else {
        return;
    };
    let Some(part) = first.partition(1) else {
        return;
    };
    if !tool("mkfs.ext4", &["-q", "-F"], &part) {
        return;
    }
    let Some(twin) = Loop::attach(&img, true) else {
        return;
    };
    let Some(twin_part) = twin.partition(1) else {
        return;
    };
    let mnt = tempfile::tempdir().unwrap();
    let Some(_m) = Mount::new(&twin_part, mnt.path(), &[]) else {
        return;
    };
    write_run(&part, &["--force-signature"])
        .code(2)
        .stderr(predicate::str::contains(twin.name()))
        .stderr(predicate::str::contains("no option overrides"));
}

/// Review of issue 14: IOPOLL refused on a block device named "the device
/// under /dev" (the directory of its node); it names the device.
#[test]
fn iopoll_refused_on_a_device_names_the_device() {
    let dir = scratch();
    let Some(lo) = Loop::attach(&image(dir.path(), "poll.img", 16), false) else {
        return;
    };
    let out = iopath()
        .args(["run", "--file"])
        .arg(lo.path())
        .args([
            "--methods",
            "uring-iopoll",
            "--patterns",
            "randread",
            "--time",
            "50ms",
            "--repeat",
            "1",
        ])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !text.contains("no poll queues") {
        crate::common::skip_anyway(format!(
            "uring-iopoll was not refused for lack of poll queues here: {text}"
        ));
        return;
    }
    assert!(!text.contains("under /dev"), "{text}");
    assert!(
        text.contains(&format!(
            "the device {} has no poll queues",
            lo.path().display()
        )),
        "{text}"
    );
}

/// Review of issue 14: a mistyped device name (`/dev/loop77`, absent) made
/// iopath create a file in devtmpfs and benchmark memory, exit 0.
#[test]
fn a_missing_device_name_is_refused_not_created_in_dev() {
    let name = format!("/dev/iopath-test-absent-{}", std::process::id());
    iopath()
        .args(["run", "--file", &name, "--size", "4M", "--time", "50ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("{name} does not exist")))
        .stderr(predicate::str::contains("name an existing device"));
    assert!(!Path::new(&name).exists(), "{name} was created");
}

#[test]
fn a_luks_header_is_a_signature() {
    let dir = scratch();
    let img = image(dir.path(), "luks.img", 16);
    let mut head = b"LUKS\xba\xbe\x00\x02".to_vec();
    head.resize(4096, 0);
    let mut f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
    std::io::Write::write_all(&mut f, &head).unwrap();
    drop(f);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    write_run(lo.path(), &[])
        .code(2)
        .stderr(predicate::str::contains("LUKS"));
}

/// Review of issue 14: a run that only reads never opens its target for
/// writing (ucache and uffd used to open it O_RDWR "in case a writer
/// came", without --allow-write: on a block device, behind the write
/// guard). A close of a descriptor opened for writing is what inotify's
/// IN_CLOSE_WRITE reports, whether or not it wrote.
#[test]
fn a_read_only_run_never_opens_its_target_for_writing() {
    use rustix::fs::inotify;
    let dir = scratch();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, vec![0x5au8; 4 << 20]).unwrap();
    let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).unwrap();
    inotify::add_watch(&fd, &file, inotify::WatchFlags::CLOSE_WRITE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["run", "--quiet", "--repeat", "1", "--time", "100ms"])
        .args(["--methods", "ucache,uffd,buffered,direct,mmap"])
        .args(["--patterns", "read,randread", "--file"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut buf = [0u8; 4096];
    match rustix::io::read(&fd, &mut buf) {
        Err(rustix::io::Errno::AGAIN) => {}
        Ok(n) => panic!(
            "{n} bytes of IN_CLOSE_WRITE events: {} was opened for writing by a run that only reads",
            file.display()
        ),
        Err(e) => panic!("inotify read: {e}"),
    }
}

/// Review of issue 14: a read-only loop device (`losetup -r`) is read by
/// every method, ucache and uffd included.
#[test]
fn a_read_only_device_is_read_by_ucache_and_uffd() {
    let dir = scratch();
    let img = image(dir.path(), "ro.img", 16);
    std::fs::write(&img, vec![0x5au8; 16 << 20]).unwrap();
    let Some(lo) = Loop::attach_read_only(&img) else {
        return;
    };
    let j = json_run(&[
        "--file".as_ref(),
        lo.path().as_os_str(),
        "--methods".as_ref(),
        "ucache,uffd".as_ref(),
        "--patterns".as_ref(),
        "randread".as_ref(),
        "--ucache-size".as_ref(),
        "4M".as_ref(),
    ]);
    for c in j["cases"].as_array().unwrap() {
        assert!(c["error"].is_null(), "{c}");
        if let Some(why) = c["skipped"].as_str() {
            // uffd may be refused by the kernel (no userfaultfd): said so.
            assert!(c["method"] == "uffd" && why.contains("userfaultfd"), "{c}");
            continue;
        }
        assert!(c["summary"]["read_bytes"].as_u64().unwrap() > 0, "{c}");
    }
}

/// Review of issue 14: a read-only device (`losetup -r`) given
/// --allow-write is refused up front (exit 2, naming the device and its
/// `ro` attribute), not failed case by case with EPERM.
#[test]
fn a_read_only_device_is_refused_for_writing_up_front() {
    let dir = scratch();
    let Some(lo) = Loop::attach_read_only(&image(dir.path(), "ro.img", 16)) else {
        return;
    };
    write_run(lo.path(), &[])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is read-only (/sys/class/block/{}/ro = 1)",
            lo.name(),
            lo.name()
        )))
        .stderr(predicate::str::contains("read patterns"));
}
