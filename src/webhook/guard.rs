//! Where webhooks may go. Targets must be absolute HTTPS URLs; before connecting, every
//! resolved address is checked: loopback, private, link-local, shared, documentation,
//! multicast and other non-public ranges are refused unless an operator allow-list
//! (`--webhook-allow-cidr`) admits them.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An absolute HTTPS URL with a host, or the reason it is not one.
pub fn parse_target(s: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(s.trim()).map_err(|e| format!("not an absolute URL ({e})"))?;
    if u.scheme() != "https" {
        return Err(format!("must use https, not {}", u.scheme()));
    }
    if u.host_str().is_none_or(|h| h.is_empty()) {
        return Err("has no host".into());
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err("must not carry credentials".into());
    }
    Ok(u)
}

/// The operator's view of which addresses webhooks may reach.
#[derive(Clone, Debug, Default)]
pub struct AddressGuard {
    allow: Vec<IpNet>,
}

impl AddressGuard {
    /// `allow` holds CIDR ranges (for example `127.0.0.0/8` in tests).
    pub fn new(allow: &[&str]) -> Result<AddressGuard, String> {
        let allow = allow
            .iter()
            .map(|c| {
                c.trim()
                    .parse::<IpNet>()
                    .or_else(|_| c.trim().parse::<IpAddr>().map(IpNet::from))
                    .map_err(|e| format!("'{c}' is not a CIDR range ({e})"))
            })
            .collect::<Result<_, _>>()?;
        Ok(AddressGuard { allow })
    }

    /// Ok when a webhook may connect to `ip`; otherwise the reason.
    pub fn check(&self, ip: IpAddr) -> Result<(), String> {
        let ip = canonical(ip);
        if self.allow.iter().any(|n| n.contains(&ip)) {
            return Ok(());
        }
        match non_public(ip) {
            Some(kind) => Err(format!(
                "{ip} is a {kind} address; webhooks go only to public addresses"
            )),
            None => Ok(()),
        }
    }
}

/// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => v4_kind(a),
        IpAddr::V6(a) => v6_kind(a),
    }
}

fn v4_kind(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    Some(if a.is_loopback() {
        "loopback"
    } else if a.is_private() {
        "private"
    } else if a.is_link_local() {
        "link-local"
    } else if a.is_unspecified() || o[0] == 0 {
        "unspecified"
    } else if a.is_broadcast() {
        "broadcast"
    } else if a.is_multicast() || o[0] >= 240 {
        "multicast or reserved"
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        "shared (carrier-grade NAT)"
    } else if a.is_documentation() {
        "documentation"
    } else if o[0] == 198 && (o[1] == 18 || o[1] == 19) {
        "benchmarking"
    } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        "protocol-assignment"
    } else {
        return None;
    })
}

fn v6_kind(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    Some(if a.is_loopback() {
        "loopback"
    } else if a.is_unspecified() {
        "unspecified"
    } else if a.is_multicast() {
        "multicast"
    } else if (s[0] & 0xfe00) == 0xfc00 {
        "unique-local (private)"
    } else if (s[0] & 0xffc0) == 0xfe80 {
        "link-local"
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        "documentation"
    } else if s[0] == 0x0064 && s[1] == 0xff9b {
        "NAT64"
    } else {
        return None;
    })
}
