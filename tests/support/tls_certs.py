"""Certificates for the TLS tests, made with the `openssl` command: a CA, server certificates
(RSA and ECDSA, several names, a wildcard), client certificates. Each call writes into `dir`
and returns the paths; nothing is shared between tests."""
from __future__ import annotations

import subprocess
from pathlib import Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=60)


class Pki:
    """A CA in `dir`, and the certificates it signs."""

    def __init__(self, dir: Path, name: str = "Test CA"):
        self.dir = Path(dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca_key = self.dir / "ca.key"
        self.ca = self.dir / "ca.pem"
        _run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(self.ca_key), "-out", str(self.ca), "-days", "30",
             "-subj", f"/CN={name}", cwd=self.dir)
        self._serial = 1

    def issue(self, stem: str, cn: str, names: list[str] | None = None, key: str = "rsa",
              client: bool = False, days: int = 30, out_dir: Path | None = None,
              bits: int = 2048) -> Path:
        """A PEM file holding the certificate then its key (HAProxy's `crt` format). `key`:
        rsa (`bits`, 2048 by default) or ecdsa (P-256). `names`: DNS subjectAltNames (default: the CN)."""
        d = Path(out_dir) if out_dir else self.dir
        d.mkdir(parents=True, exist_ok=True)
        k, csr, crt, ext = (self.dir / f"{stem}.{x}" for x in ("keyfile", "csr", "crt", "ext"))
        if key == "rsa":
            _run("genpkey", "-algorithm", "RSA", "-pkeyopt", f"rsa_keygen_bits:{bits}", "-out", str(k),
                 cwd=self.dir)
        else:
            _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                 str(k), cwd=self.dir)
        _run("req", "-new", "-key", str(k), "-out", str(csr), "-subj", f"/CN={cn}", cwd=self.dir)
        lines = []
        if not client:
            sans = names if names is not None else [cn]
            lines.append("subjectAltName=" + ",".join(f"DNS:{n}" for n in sans))
            lines.append("extendedKeyUsage=serverAuth")
        else:
            lines.append("extendedKeyUsage=clientAuth")
        ext.write_text("\n".join(lines) + "\n")
        self._serial += 1
        _run("x509", "-req", "-in", str(csr), "-CA", str(self.ca), "-CAkey", str(self.ca_key),
             "-set_serial", str(self._serial), "-days", str(days), "-extfile", str(ext),
             "-out", str(crt), cwd=self.dir)
        pem = d / f"{stem}.pem"
        pem.write_text(crt.read_text() + k.read_text())
        return pem


def s_client(port: int, *args: str, data: bytes = b"", timeout: float = 10) -> str:
    """openssl s_client's output (-brief) for a handshake with 127.0.0.1:port, `data` sent."""
    r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-brief", *args],
                       input=data, capture_output=True, timeout=timeout)
    return (r.stdout + r.stderr).decode(errors="replace")


def subject(out: str) -> str:
    """The peer certificate's subject in s_client's output; empty without a handshake."""
    for line in out.splitlines():
        if line.startswith("Peer certificate:"):
            return line.split(":", 1)[1].strip()
    return ""
