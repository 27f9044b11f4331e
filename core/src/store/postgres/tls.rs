//! TLS to the server, with rustls (pure Rust, so no system OpenSSL on any platform the
//! bindings ship to) through `tokio-postgres-rustls`.
//!
//! The modes are libpq's: `disable` never encrypts; `prefer` encrypts when the server offers
//! it, without checking its certificate; `require` always encrypts, and checks the
//! certificate against `sslrootcert` when one is given (as libpq does), else not at all;
//! `verify-ca` checks that the certificate chains to a CA of `sslrootcert`; `verify-full`
//! also checks that it names the host connected to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};

/// How a PostgreSQL store protects its connections (`sslmode=…`, as libpq names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Plaintext only.
    Disable,
    /// TLS when the server offers it, without checking its certificate (the default, as in
    /// libpq).
    #[default]
    Prefer,
    /// TLS always; the certificate is checked against `sslrootcert` when one is given.
    Require,
    /// TLS, with a certificate that chains to a CA of `sslrootcert`.
    VerifyCa,
    /// TLS, with a certificate that chains to a CA of `sslrootcert` and names the host.
    VerifyFull,
}

impl SslMode {
    /// Parses a `sslmode` value.
    pub(crate) fn parse(url: &str, value: &str) -> Result<Self> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => {
                return Err(Error::invalid_input(format!(
                    "store URL {url:?}: sslmode={value:?} is not one of disable, prefer, \
                     require, verify-ca, verify-full"
                )))
            }
        })
    }

    /// The value the driver gets: it only tells whether to ask for TLS.
    pub(crate) fn driver_value(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => "require",
        }
    }
}

/// The TLS connector for `mode`, trusting the CAs of `root_cert`.
pub(crate) fn connector(
    location: &str,
    mode: SslMode,
    root_cert: Option<&PathBuf>,
) -> Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match (mode, root_cert) {
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(Error::invalid_input(format!(
                "store {location}: sslmode={} needs sslrootcert=FILE, the PEM file of the CAs \
                 that sign the server's certificate",
                match mode {
                    SslMode::VerifyCa => "verify-ca",
                    _ => "verify-full",
                }
            )))
        }
        (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => {
            Arc::new(AnyCertificate(provider.clone()))
        }
        (SslMode::VerifyFull, Some(file)) => webpki(location, file, &provider)?,
        (SslMode::Require | SslMode::VerifyCa, Some(file)) => {
            Arc::new(AnyHostName(webpki(location, file, &provider)?))
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::storage(format!("store {location}: setting up TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn webpki(
    location: &str,
    file: &Path,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>> {
    let bad = |what: String| {
        Error::invalid_input(format!(
            "store {location}: sslrootcert {}: {what}",
            file.display()
        ))
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(file).map_err(|e| bad(e.to_string()))? {
        roots
            .add(cert.map_err(|e| bad(e.to_string()))?)
            .map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("holds no PEM certificate".to_owned()));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| bad(e.to_string()))
}

/// Accepts any certificate (`prefer`, and `require` without `sslrootcert`), still checking
/// that the server holds its key.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Checks the chain but not the host name (`verify-ca`).
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // The chain is checked before the name: a name mismatch means the chain held.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
