# Helper of make-ns-fixtures.sh: a TCP server that reads until EOF, or a client that sends N bytes and holds the connection open H seconds.
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "server":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port)); s.listen(4)
    c, _ = s.accept()
    n = 0
    while True:
        d = c.recv(65536)
        if not d: break
        n += len(d)
    time.sleep(0.2); c.close()
else:
    total, hold = int(sys.argv[4]), float(sys.argv[5])
    c = socket.create_connection((host, port))
    buf = b"x" * 65536; sent = 0
    while sent < total:
        sent += c.send(buf)
    time.sleep(hold)
    c.close()
