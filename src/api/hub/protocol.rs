//! SignalR's JSON hub protocol, version 1, as the official clients speak it: records are JSON
//! texts each ended by the record separator 0x1E; the first is the handshake; then messages
//! with a numeric `type` (1 invocation, 3 completion, 6 ping, 7 close; 2, 4 and 5 are
//! streaming, which this hub does not offer). Parsing only, no I/O: the connection decides
//! what to do with each message.

use serde_json::{json, Value};

/// Ends every record.
pub const RECORD_SEPARATOR: char = '\u{1e}';

/// A message from a client.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A hub method call; `invocation_id` None when the client expects no completion
    /// (`send` rather than `invoke`).
    Invocation {
        invocation_id: Option<String>,
        target: String,
        arguments: Vec<Value>,
    },
    /// A streaming call or an upload: refused with a completion.
    Streaming {
        invocation_id: Option<String>,
    },
    Ping,
    Close,
    /// A message type this hub ignores (a client's completion or stream item, cancel, or a
    /// type it does not know).
    Ignored,
}

/// Splits `buffer` into the complete records it holds, leaving any incomplete tail in it.
pub fn take_records(buffer: &mut String) -> Vec<String> {
    let mut records = Vec::new();
    while let Some(end) = buffer.find(RECORD_SEPARATOR) {
        let record: String = buffer.drain(..end + RECORD_SEPARATOR.len_utf8()).collect();
        records.push(record[..end].to_string());
    }
    records
}

/// Checks the handshake request: `{"protocol":"json","version":1}`. The error is what the
/// handshake response says.
pub fn handshake(record: &str) -> Result<(), String> {
    let v: Value =
        serde_json::from_str(record).map_err(|e| format!("the handshake is not JSON: {e}"))?;
    match (
        v.get("protocol").and_then(Value::as_str),
        v.get("version").and_then(Value::as_i64),
    ) {
        (Some("json"), Some(1)) => Ok(()),
        (Some("json"), v) => Err(format!(
            "the requested protocol version {} is not supported: this hub speaks json version 1",
            v.map_or("(none)".to_string(), |v| v.to_string())
        )),
        (Some(other), _) => Err(format!(
            "the protocol '{other}' is not supported: this hub speaks json (version 1)"
        )),
        (None, _) => Err("the handshake names no protocol".into()),
    }
}

/// Parses one record of a client.
pub fn parse(record: &str) -> Result<Incoming, String> {
    let v: Value =
        serde_json::from_str(record).map_err(|e| format!("a message is not JSON: {e}"))?;
    let id = || {
        v.get("invocationId")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match v.get("type").and_then(Value::as_i64) {
        Some(1) => {
            let target = v
                .get("target")
                .and_then(Value::as_str)
                .ok_or("an invocation has no target")?
                .to_string();
            let arguments = match v.get("arguments") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a.clone(),
                Some(_) => return Err("an invocation's arguments must be an array".into()),
            };
            // a streaming upload rides on an invocation with streamIds
            if v.get("streamIds")
                .is_some_and(|s| s.as_array().is_some_and(|a| !a.is_empty()))
            {
                return Ok(Incoming::Streaming {
                    invocation_id: id(),
                });
            }
            Ok(Incoming::Invocation {
                invocation_id: id(),
                target,
                arguments,
            })
        }
        Some(4) => Ok(Incoming::Streaming {
            invocation_id: id(),
        }),
        Some(6) => Ok(Incoming::Ping),
        Some(7) => Ok(Incoming::Close),
        // a client's completion or stream item, a cancel, and types newer than this hub
        // (the protocol asks servers to ignore what they do not know)
        Some(_) => Ok(Incoming::Ignored),
        None => Err("a message has no type".into()),
    }
}

fn record(v: Value) -> String {
    let mut s = v.to_string();
    s.push(RECORD_SEPARATOR);
    s
}

/// The handshake response: `{}` or `{"error": ...}`.
pub fn handshake_response(error: Option<&str>) -> String {
    record(match error {
        None => json!({}),
        Some(e) => json!({ "error": e }),
    })
}

/// A server-to-client call of client method `target` with one argument.
pub fn event(target: &str, argument: Value) -> String {
    record(json!({ "type": 1, "target": target, "arguments": [argument] }))
}

/// The completion of invocation `id`: its result, or its error.
pub fn completion(id: &str, outcome: Result<Value, String>) -> String {
    record(match outcome {
        Ok(Value::Null) => json!({ "type": 3, "invocationId": id }),
        Ok(result) => json!({ "type": 3, "invocationId": id, "result": result }),
        Err(error) => json!({ "type": 3, "invocationId": id, "error": error }),
    })
}

pub fn ping() -> String {
    record(json!({ "type": 6 }))
}

/// Close, with the reason when it is an error.
pub fn close(error: Option<&str>, allow_reconnect: bool) -> String {
    record(match error {
        None => json!({ "type": 7 }),
        Some(e) => json!({ "type": 7, "error": e, "allowReconnect": allow_reconnect }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_split_at_the_separator_and_a_tail_waits() {
        let mut buf = "{\"type\":6}\u{1e}{\"type\":1,\"tar".to_string();
        assert_eq!(take_records(&mut buf), vec!["{\"type\":6}".to_string()]);
        assert_eq!(buf, "{\"type\":1,\"tar");
        buf.push_str("get\":\"X\"}\u{1e}");
        assert_eq!(take_records(&mut buf).len(), 1);
        assert!(buf.is_empty());
    }

    #[test]
    fn the_handshake_wants_json_version_1() {
        assert_eq!(handshake(r#"{"protocol":"json","version":1}"#), Ok(()));
        assert!(handshake(r#"{"protocol":"messagepack","version":1}"#)
            .unwrap_err()
            .contains("messagepack"));
        assert!(handshake(r#"{"protocol":"json","version":2}"#)
            .unwrap_err()
            .contains("version 2"));
        assert!(handshake("nope").is_err());
    }

    #[test]
    fn invocations_pings_closes_and_streams_are_told_apart() {
        assert_eq!(
            parse(r#"{"type":1,"invocationId":"0","target":"SubscribeToNest","arguments":["r"]}"#),
            Ok(Incoming::Invocation {
                invocation_id: Some("0".into()),
                target: "SubscribeToNest".into(),
                arguments: vec![json!("r")],
            })
        );
        assert_eq!(
            parse(r#"{"type":1,"target":"StopNesting","arguments":["r"]}"#),
            Ok(Incoming::Invocation {
                invocation_id: None,
                target: "StopNesting".into(),
                arguments: vec![json!("r")],
            })
        );
        assert_eq!(parse(r#"{"type":6}"#), Ok(Incoming::Ping));
        assert_eq!(parse(r#"{"type":7}"#), Ok(Incoming::Close));
        assert_eq!(
            parse(r#"{"type":4,"invocationId":"1","target":"X","arguments":[]}"#),
            Ok(Incoming::Streaming {
                invocation_id: Some("1".into())
            })
        );
        assert!(parse(r#"{"type":1,"arguments":[]}"#).is_err());
        assert_eq!(parse(r#"{"type":99}"#), Ok(Incoming::Ignored));
        assert!(parse(r#"{"target":"X"}"#).is_err());
    }

    #[test]
    fn what_the_server_writes_is_one_record_each() {
        assert_eq!(handshake_response(None), "{}\u{1e}");
        let c = completion("3", Err("no".into()));
        assert!(c.ends_with('\u{1e}') && c.contains("\"error\":\"no\""));
        let e = event("NestingProgress", json!({"RequestId": "r"}));
        let v: Value = serde_json::from_str(e.trim_end_matches('\u{1e}')).unwrap();
        assert_eq!(v["type"], 1);
        assert_eq!(v["arguments"][0]["RequestId"], "r");
        assert!(v.get("invocationId").is_none());
    }
}
