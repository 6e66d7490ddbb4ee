//! Tests of [`super`].

use super::*;

const MIB: usize = 1 << 20;

fn blank() -> (Vec<u8>, Vec<u8>) {
    (vec![0u8; MIB], vec![0u8; MIB])
}

fn put(buf: &mut [u8], off: usize, bytes: &[u8]) {
    buf[off..off + bytes.len()].copy_from_slice(bytes);
}

const SIZE: u64 = 64 << 20;

#[test]
fn zeros_and_random_data_carry_no_signature() {
    let (h, t) = blank();
    assert!(signatures(&h, &t, SIZE).is_empty());
    let mut rng = iopath_io::data::Rng::new(7);
    let mut h = vec![0u8; MIB];
    rng.fill_as(&mut h, iopath_io::data::DataMode::Random);
    assert!(signatures(&h, &h, SIZE).is_empty());
    // A device smaller than what is probed, and an empty one.
    assert!(signatures(&h[..3000], &h[..3000], 3000).is_empty());
    assert!(signatures(&[], &[], 0).is_empty());
}

#[test]
fn file_system_signatures() {
    let cases: &[(usize, &[u8], &str)] = &[
        (1080, &[0x53, 0xEF], "ext2/3/4"),
        (0, b"XFSB", "xfs"),
        (65600, b"_BHRfS_M", "btrfs"),
        (4086, b"SWAPSPACE2", "swap"),
        (4086, b"SWAP-SPACE", "swap"),
        (65526, b"SWAPSPACE2", "swap"),
    ];
    for &(off, bytes, name) in cases {
        let (mut h, t) = blank();
        put(&mut h, off, bytes);
        assert_eq!(signatures(&h, &t, SIZE), [name], "{name} at {off}");
    }
    // The ext magic one byte off is nothing.
    let (mut h, t) = blank();
    put(&mut h, 1081, &[0x53, 0xEF]);
    assert!(signatures(&h, &t, SIZE).is_empty());
}

#[test]
fn lvm_label_in_any_of_the_first_four_sectors() {
    for s in 0..4 {
        let (mut h, t) = blank();
        put(&mut h, s * 512, b"LABELONE");
        put(&mut h, s * 512 + 24, b"LVM2 001");
        assert_eq!(signatures(&h, &t, SIZE), ["LVM2"]);
    }
    let (mut h, t) = blank();
    put(&mut h, 4 * 512, b"LABELONE");
    put(&mut h, 4 * 512 + 24, b"LVM2 001");
    assert!(signatures(&h, &t, SIZE).is_empty());
    let (mut h, t) = blank();
    put(&mut h, 0, b"LABELONE");
    assert!(signatures(&h, &t, SIZE).is_empty(), "label without LVM2");
}

#[test]
fn md_superblocks_at_the_start_and_the_end() {
    let magic = 0xa92b_4efcu32.to_le_bytes();
    for off in [0usize, 4096] {
        let (mut h, t) = blank();
        put(&mut h, off, &magic);
        assert_eq!(signatures(&h, &t, SIZE), ["mdraid"], "1.x at {off}");
    }
    // 1.0: 8 KiB from the end of a 64 MiB device (4 KiB aligned).
    let (h, mut t) = blank();
    put(&mut t, MIB - 8192, &magic);
    assert_eq!(signatures(&h, &t, SIZE), ["mdraid"]);
    // 0.90: 64 KiB from the end.
    let (h, mut t) = blank();
    put(&mut t, MIB - 65536, &magic);
    assert_eq!(signatures(&h, &t, SIZE), ["mdraid"]);
    // Elsewhere in the tail: nothing.
    let (h, mut t) = blank();
    put(&mut t, MIB - 4096, &magic);
    assert!(signatures(&h, &t, SIZE).is_empty());
}

#[test]
fn encrypted_volumes_other_file_systems_and_caches() {
    for (off, bytes, what) in [
        (0usize, &b"LUKS\xba\xbe"[..], "LUKS"),
        (16 << 10, &b"SKUL\xba\xbe"[..], "LUKS"),
        (3, &b"NTFS    "[..], "NTFS"),
        (3, &b"EXFAT   "[..], "exFAT"),
        (82, &b"FAT32"[..], "FAT"),
        (54, &b"FAT16"[..], "FAT"),
        (1024, &0xF2F5_2010u32.to_le_bytes()[..], "f2fs"),
        (32769, &b"CD001"[..], "ISO 9660"),
        (4096 + 24, &BCACHE_MAGIC[..], "bcache"),
        (4096 + 24, &BCACHEFS_MAGIC[..], "bcachefs"),
        ((128 << 10) + 3 * 1024, &[0x0c, 0xb1, 0xba, 0x00][..], "ZFS"),
    ] {
        let (mut h, t) = blank();
        put(&mut h, off, bytes);
        assert_eq!(signatures(&h, &t, SIZE), [what], "{what} at {off}");
    }
    // ZFS's labels at the end alone (the front ones wiped).
    let (h, mut t) = blank();
    put(
        &mut t,
        MIB - (256 << 10) + (128 << 10),
        &[0x00, 0xba, 0xb1, 0x0c],
    );
    assert_eq!(signatures(&h, &t, SIZE), ["ZFS"]);
}

#[test]
fn partition_tables() {
    let (mut h, t) = blank();
    put(&mut h, 512, b"EFI PART");
    assert_eq!(signatures(&h, &t, SIZE), ["GPT"]);
    // The backup header alone (primary wiped).
    let (h, mut t) = blank();
    put(&mut t, MIB - 512, b"EFI PART");
    assert_eq!(signatures(&h, &t, SIZE), ["GPT"]);
    // MBR: the boot mark and a partition entry of type 0x83.
    let (mut h, t) = blank();
    put(&mut h, 510, &[0x55, 0xAA]);
    // The mark alone is a boot sector: someone's (review of issue 14).
    assert_eq!(
        signatures(&h, &t, SIZE),
        ["boot sector"],
        "mark, no partition"
    );
    put(&mut h, 446, &[0, 0x20, 0x21, 0, 0x83, 0x14, 0x10, 0x04]);
    put(&mut h, 446 + 8, &2048u32.to_le_bytes());
    assert_eq!(signatures(&h, &t, SIZE), ["MBR"]);
    // A protective MBR under a GPT is reported as GPT only.
    put(&mut h, 512, b"EFI PART");
    assert_eq!(signatures(&h, &t, SIZE), ["GPT"]);
}

#[test]
fn several_signatures_are_all_named() {
    let (mut h, t) = blank();
    put(&mut h, 1080, &[0x53, 0xEF]);
    put(&mut h, 4086, b"SWAPSPACE2");
    assert_eq!(signatures(&h, &t, SIZE), ["ext2/3/4", "swap"]);
}

fn fam(name: &str, dev: (u32, u32)) -> Member {
    Member {
        name: name.into(),
        dev,
        sysdir: PathBuf::new(),
    }
}

/// The target and, for a partition, its disk are checked for `ro`;
/// never a disk's partitions.
#[test]
fn read_only_devices_of_the_family() {
    let d = tempfile::tempdir().unwrap();
    let dir = |n: &str, ro: &str, part: bool| {
        let p = d.path().join(n);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("ro"), ro).unwrap();
        if part {
            std::fs::write(p.join("partition"), "1\n").unwrap();
        }
        Member {
            name: n.into(),
            dev: (7, 0),
            sysdir: p,
        }
    };
    let (disk, part) = (dir("loop5", "1\n", false), dir("loop5p1", "0\n", true));
    assert_eq!(read_only(&[part.clone(), disk.clone()]), ["loop5"]);
    let (rw_disk, ro_part) = (dir("loop6", "0\n", false), dir("loop6p1", "1\n", true));
    assert!(read_only(&[rw_disk.clone(), ro_part.clone()]).is_empty());
    assert_eq!(read_only(&[ro_part, rw_disk]), ["loop6p1"]);
}

#[test]
fn mounts_are_found_by_device_number() {
    let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
              40 22 7:17 / /mnt/my\\040disk rw shared:9 - ext4 /nonexistent/loop1p1 rw\n";
    let family = [fam("loop1", (7, 16)), fam("loop1p1", (7, 17))];
    assert_eq!(
        mounted(mi, &family),
        [("loop1p1".to_string(), "/mnt/my disk".to_string())]
    );
    assert!(mounted(mi, &family[..1]).is_empty());
}

#[test]
fn refusal_messages_name_reason_and_override() {
    let p = Path::new("/dev/loop9");
    let sig = Refusal::Signature {
        what: vec!["ext2/3/4"],
    };
    assert!(sig.overridable());
    assert!(sig.message(p).contains("carries an ext2/3/4 signature"));
    for (name, a) in [
        ("LVM2", "an"),
        ("GPT", "a"),
        ("xfs", "an"),
        ("swap", "a"),
        ("MBR", "an"),
        ("LUKS", "a"),
    ] {
        assert_eq!(article(name), a, "{name}");
    }
    let ro = Refusal::ReadOnly {
        dev: "loop9".into(),
    };
    assert!(!ro.overridable());
    assert!(ro
        .message(p)
        .contains("loop9 is read-only (/sys/class/block/loop9/ro = 1)"));
    assert!(sig.message(p).contains("--force-signature"));
    let m = Refusal::Mounted {
        dev: "loop9p1".into(),
        at: "/mnt".into(),
    };
    assert!(!m.overridable());
    assert!(m.message(p).contains("loop9p1 is mounted at /mnt"));
    assert!(m.message(p).contains("no option overrides"));
    let h = Refusal::Held {
        dev: "loop9".into(),
        holders: vec!["loop10".into()],
    };
    assert!(!h.overridable() && h.message(p).contains("held by loop10"));
    assert!(!Refusal::Swap { dev: "x".into() }.overridable());
}
