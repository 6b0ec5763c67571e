fn main() {
    let a: Vec<String> = std::env::args().collect();
    let want: u64 = a[2].parse().unwrap();
    let mut c = tcpwhy_capture::Capture::open(std::path::Path::new(&a[1])).unwrap();
    while let Some(f) = c.next_frame().unwrap() {
        if f.number == want {
            println!("{:?} {:02x?}", f.link, &f.data[..f.data.len().min(120)]);
            println!("{:?}", tcpwhy_capture::decode(&f));
        }
    }
}
