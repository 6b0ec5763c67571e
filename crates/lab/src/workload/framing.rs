//! The http workload's messages: HTTP/1.1-looking text of an exact size, so a capture reads
//! like real traffic ("GET /object/3?bytes=741342 HTTP/1.1") and both ends can find the
//! message boundaries without trusting anything but Content-Length.
//!
//! Sizes are exact on the wire: a request of `request_bytes` is a GET whose `X-Pad` header
//! fills it up, or above [`PAD_HEAD_LIMIT`] a POST with a body; a response of
//! `response_bytes` is a 200 whose head (with its own `X-Pad`) plus body add up to it.

/// Requests up to this size are a padded GET; larger ones carry the excess as a POST body
/// (a head of many KiB would not look like anything real).
pub const PAD_HEAD_LIMIT: u64 = 8 * 1024;
/// A head longer than this is a protocol error, as in common servers' 64 KiB limits.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

const HEAD_END: &[u8] = b"\r\n\r\n";

fn connection(close: bool) -> &'static str {
    if close {
        "close"
    } else {
        "keep-alive"
    }
}

fn request_head(
    index: u32,
    response_bytes: u64,
    host: &str,
    close: bool,
    body: Option<u64>,
    pad: usize,
) -> Vec<u8> {
    let method = if body.is_some() { "POST" } else { "GET" };
    let mut h = format!(
        "{method} /object/{index}?bytes={response_bytes} HTTP/1.1\r\n\
         Host: {host}\r\n\
         User-Agent: tcpwhy-lab\r\n\
         Connection: {}\r\n",
        connection(close)
    );
    if let Some(b) = body {
        h.push_str(&format!(
            "Content-Type: application/octet-stream\r\nContent-Length: {b}\r\n"
        ));
    }
    h.push_str("X-Pad: ");
    h.extend(std::iter::repeat_n('p', pad));
    h.push_str("\r\n\r\n");
    h.into_bytes()
}

/// The whole request (head and body) of exactly `total` bytes, or None when `total` is
/// smaller than the head.
pub fn request(
    index: u32,
    response_bytes: u64,
    host: &str,
    close: bool,
    total: u64,
) -> Option<Vec<u8>> {
    let (head, body) = if total <= PAD_HEAD_LIMIT {
        let bare = request_head(index, response_bytes, host, close, None, 0).len() as u64;
        let pad = usize::try_from(total.checked_sub(bare)?).ok()?;
        (
            request_head(index, response_bytes, host, close, None, pad),
            0,
        )
    } else {
        // A head sized for the longest Content-Length leaves a body that fits; the few
        // bytes the shorter number frees go into X-Pad.
        let longest = request_head(index, response_bytes, host, close, Some(total), 0).len();
        let body = total.checked_sub(longest as u64)?;
        let bare = request_head(index, response_bytes, host, close, Some(body), 0).len() as u64;
        let pad = usize::try_from(total - body - bare).ok()?;
        let head = request_head(index, response_bytes, host, close, Some(body), pad);
        (head, body)
    };
    let mut msg = head;
    msg.extend(filler(usize::try_from(body).ok()?));
    Some(msg)
}

fn response_head(body: u64, close: bool, pad: usize) -> Vec<u8> {
    let mut h = format!(
        "HTTP/1.1 200 OK\r\n\
         Server: tcpwhy-lab\r\n\
         Content-Type: application/octet-stream\r\n\
         Content-Length: {body}\r\n\
         Connection: {}\r\n\
         X-Pad: ",
        connection(close)
    );
    h.extend(std::iter::repeat_n('p', pad));
    h.push_str("\r\n\r\n");
    h.into_bytes()
}

/// The response head for a response of exactly `total` bytes, and its body length; None
/// when `total` is smaller than the head.
pub fn response_head_for(total: u64, close: bool) -> Option<(Vec<u8>, u64)> {
    let longest = response_head(total, close, 0).len() as u64;
    let body = total.checked_sub(longest)?;
    let bare = response_head(body, close, 0).len() as u64;
    let pad = usize::try_from(total - body - bare).ok()?;
    Some((response_head(body, close, pad), body))
}

/// The whole response of exactly `total` bytes; a `total` below the head gives the
/// smallest response (empty body), as a server cannot send less than its head.
pub fn response(total: u64, close: bool) -> Vec<u8> {
    let (mut msg, body) =
        response_head_for(total, close).unwrap_or_else(|| (response_head(0, close, 0), 0));
    msg.extend(filler(usize::try_from(body).unwrap_or(0)));
    msg
}

/// Body bytes: readable text, so a capture's payload view is not a wall of zeros.
pub fn filler(len: usize) -> impl Iterator<Item = u8> {
    b"tcpwhy-lab payload\n".iter().copied().cycle().take(len)
}

/// Checks the http sizes for every request index up to `last_index`.
pub fn check_sizes(
    last_index: u32,
    request_bytes: u64,
    response_bytes: u64,
    host: &str,
) -> Result<(), String> {
    // keep-alive is the longer Connection value, so it bounds close from above.
    if request(last_index, response_bytes, host, false, request_bytes).is_none() {
        let min = request_head(last_index, response_bytes, host, false, None, 0).len();
        return Err(format!(
            "http request_bytes {request_bytes} is below the smallest request head ({min} bytes)"
        ));
    }
    if response_head_for(response_bytes, false).is_none() {
        let min = response_head(0, false, 0).len();
        return Err(format!(
            "http response_bytes {response_bytes} is below the smallest response head ({min} bytes)"
        ));
    }
    Ok(())
}

/// A request head as the server reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedRequest {
    /// Bytes of the head, blank line included.
    pub head_len: usize,
    /// Content-Length (0 without).
    pub body_len: u64,
    /// The `bytes=` query parameter: response size asked for.
    pub response_bytes: u64,
    /// `Connection: close`.
    pub close: bool,
}

/// A response head as the client reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedResponse {
    /// Bytes of the head, blank line included.
    pub head_len: usize,
    /// Content-Length.
    pub body_len: u64,
}

/// Finds a complete head at the start of `buf`: Ok(None) while more bytes are needed.
fn head(buf: &[u8]) -> Result<Option<(usize, Vec<&str>)>, String> {
    let Some(pos) = buf.windows(HEAD_END.len()).position(|w| w == HEAD_END) else {
        return if buf.len() > MAX_HEAD_BYTES {
            Err(format!(
                "no end of head in the first {MAX_HEAD_BYTES} bytes"
            ))
        } else {
            Ok(None)
        };
    };
    let text = std::str::from_utf8(&buf[..pos]).map_err(|_| "head is not UTF-8".to_string())?;
    Ok(Some((pos + HEAD_END.len(), text.split("\r\n").collect())))
}

/// `name: value` headers, names case-insensitive.
fn header<'a>(lines: &[&'a str], name: &str) -> Option<&'a str> {
    lines.iter().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn content_length(lines: &[&str]) -> Result<Option<u64>, String> {
    header(lines, "content-length")
        .map(|v| v.parse().map_err(|_| format!("bad Content-Length {v:?}")))
        .transpose()
}

/// Parses a request head at the start of `buf`.
pub fn parse_request(buf: &[u8]) -> Result<Option<ParsedRequest>, String> {
    let Some((head_len, lines)) = head(buf)? else {
        return Ok(None);
    };
    let mut parts = lines[0].split(' ');
    let (Some(_method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("bad request line {:?}", lines[0]));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad version in {:?}", lines[0]));
    }
    let response_bytes = target
        .split_once('?')
        .and_then(|(_, q)| q.split('&').find_map(|kv| kv.strip_prefix("bytes=")))
        .ok_or_else(|| format!("no bytes= in {target:?}"))?;
    let response_bytes = response_bytes
        .parse()
        .map_err(|_| format!("bad bytes= in {target:?}"))?;
    Ok(Some(ParsedRequest {
        head_len,
        body_len: content_length(&lines)?.unwrap_or(0),
        response_bytes,
        close: header(&lines, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close")),
    }))
}

/// Parses a response head at the start of `buf`; only 200 with a Content-Length is ours.
pub fn parse_response(buf: &[u8]) -> Result<Option<ParsedResponse>, String> {
    let Some((head_len, lines)) = head(buf)? else {
        return Ok(None);
    };
    if !lines[0].starts_with("HTTP/1.1 200 ") {
        return Err(format!("unexpected status line {:?}", lines[0]));
    }
    let body_len = content_length(&lines)?.ok_or("response without Content-Length")?;
    Ok(Some(ParsedResponse { head_len, body_len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_request_is_a_padded_get_of_the_exact_size() {
        let r = request(2, 741_342, "10.81.2.2:8080", false, 300).unwrap();
        assert_eq!(r.len(), 300);
        let text = std::str::from_utf8(&r).unwrap();
        assert!(
            text.starts_with("GET /object/2?bytes=741342 HTTP/1.1\r\n"),
            "{text}"
        );
        let p = parse_request(&r).unwrap().unwrap();
        assert_eq!(
            p,
            ParsedRequest {
                head_len: 300,
                body_len: 0,
                response_bytes: 741_342,
                close: false
            }
        );
    }

    #[test]
    fn smallest_request_has_an_empty_pad_and_one_less_is_refused() {
        let min = request_head(0, 1000, "h:1", true, None, 0).len() as u64;
        let r = request(0, 1000, "h:1", true, min).unwrap();
        assert!(r.ends_with(b"X-Pad: \r\n\r\n"));
        assert!(request(0, 1000, "h:1", true, min - 1).is_none());
        assert!(parse_request(&r).unwrap().unwrap().close);
    }

    #[test]
    fn large_request_is_a_post_of_the_exact_size_at_every_digit_boundary() {
        for total in [
            PAD_HEAD_LIMIT + 1,
            10_000,
            10_100,
            10_120,
            10_130,
            1_000_200,
        ] {
            let r = request(7, 5000, "h:1", false, total).unwrap();
            assert_eq!(r.len() as u64, total);
            let p = parse_request(&r).unwrap().unwrap();
            assert_eq!(p.head_len as u64 + p.body_len, total, "total {total}");
            assert!(r.starts_with(b"POST "));
        }
    }

    #[test]
    fn response_sizes_are_exact_across_content_length_digit_boundaries() {
        for total in [200, 1_100, 1_103, 1_104, 1_105, 1_106, 10_110, 741_342] {
            let (head, body) = response_head_for(total, false).unwrap();
            assert_eq!(head.len() as u64 + body, total);
            let p = parse_response(&head).unwrap().unwrap();
            assert_eq!((p.head_len, p.body_len), (head.len(), body));
        }
        assert!(response_head_for(50, false).is_none());
    }

    #[test]
    fn incomplete_head_asks_for_more_and_garbage_is_an_error() {
        let r = request(0, 1000, "h:1", false, 200).unwrap();
        assert_eq!(parse_request(&r[..150]).unwrap(), None);
        assert!(parse_request(b"HELLO\r\n\r\n").is_err());
        assert!(parse_request(b"GET /x HTTP/1.1\r\n\r\n")
            .unwrap_err()
            .contains("bytes="));
        assert!(parse_response(b"HTTP/1.1 404 Not Found\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        let huge = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert!(parse_request(&huge).is_err());
    }

    #[test]
    fn filler_is_text() {
        let f: Vec<u8> = filler(25).collect();
        assert_eq!(&f, b"tcpwhy-lab payload\ntcpwhy");
    }
}
