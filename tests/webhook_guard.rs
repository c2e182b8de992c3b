//! Webhook targets: only absolute HTTPS URLs, only public addresses unless allow-listed, and
//! the retry schedule of DESIGN 4.

use kerf::webhook::schedule::{next_delay_ms, RETRY_DELAYS_S};
use kerf::webhook::{parse_target, AddressGuard};
use std::net::IpAddr;

#[test]
fn only_absolute_https_urls() {
    assert!(parse_target("https://hooks.example.com/kerf?id=1").is_ok());
    for (bad, why) in [
        ("http://hooks.example.com/x", "https"),
        ("hooks.example.com/x", "absolute"),
        ("/relative", "absolute"),
        ("ftp://x.example.com", "https"),
        ("https://user:pw@x.example.com/", "credentials"),
        ("", "absolute"),
    ] {
        let e = parse_target(bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn non_public_addresses_are_refused_unless_allowed() {
    let guard = AddressGuard::new(&[]).unwrap();
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "192.0.2.7",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2001:db8::1",
    ] {
        let ip: IpAddr = ip.parse().unwrap();
        assert!(guard.check(ip).is_err(), "{ip} should be refused");
    }
    for ip in [
        "93.184.216.34",
        "8.8.8.8",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
    ] {
        let ip: IpAddr = ip.parse().unwrap();
        assert!(guard.check(ip).is_ok(), "{ip} is public");
    }
    let tests = AddressGuard::new(&["127.0.0.0/8", "::1"]).unwrap();
    assert!(tests.check("127.0.0.1".parse().unwrap()).is_ok());
    assert!(tests.check("::1".parse().unwrap()).is_ok());
    assert!(
        tests.check("10.0.0.1".parse().unwrap()).is_err(),
        "only what the allow-list names"
    );
    assert!(AddressGuard::new(&["not-a-range"])
        .unwrap_err()
        .contains("not-a-range"));
}

#[test]
fn retries_follow_the_schedule_then_give_up() {
    let want = [
        5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000,
    ];
    for (k, w) in want.iter().enumerate() {
        assert_eq!(next_delay_ms(k as u32 + 1, 0.0), Some(*w));
        let jittered = next_delay_ms(k as u32 + 1, 0.99).unwrap();
        assert!(jittered > *w && jittered < w + w / 10 + 1, "{jittered}");
    }
    assert_eq!(next_delay_ms(RETRY_DELAYS_S.len() as u32 + 1, 0.5), None);
    assert_eq!(next_delay_ms(0, 0.5), None);
}
