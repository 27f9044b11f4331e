//! C2SP signed notes with Ed25519 keys, and the key texts of Go's `sumdb/note`:
//! a signer key `PRIVATE+KEY+<name>+<hash>+<base64(0x01 || seed)>`, a verifier key
//! `<name>+<hash>+<base64(0x01 || public key)>`, where `<hash>` is the first four bytes of
//! `SHA-256(<name> "\n" 0x01 || public key)` as eight hex digits. A note is its text (ending
//! in a newline), an empty line, and signature lines `— <name> <base64(hash || signature)>`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use sha2::{Digest, Sha256};

use super::error::VerifiableError;

/// The algorithm byte of an Ed25519 note key.
const ALG_ED25519: u8 = 1;
/// The prefix of a signature line (an em dash and a space).
const SIGNATURE_PREFIX: &str = "\u{2014} ";

/// The application's signer key, parsed from its text form; never stored by attrflow.
#[derive(Clone)]
pub struct NoteSigner {
    name: String,
    hash: u32,
    key: SigningKey,
}

/// A verifier key: checks notes signed by the matching [`NoteSigner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteVerifier {
    name: String,
    hash: u32,
    key: VerifyingKey,
}

impl std::fmt::Debug for NoteSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoteSigner")
            .field("name", &self.name)
            .field("hash", &format_args!("{:08x}", self.hash))
            .finish_non_exhaustive()
    }
}

/// A new Ed25519 key pair named `name`: `(signer key text, verifier key text)`, as Go's
/// `note.GenerateKey` writes them.
pub fn generate_key(name: &str) -> Result<(String, String), VerifiableError> {
    check_name(name)?;
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed)
        .map_err(|error| VerifiableError::MalformedKey(format!("no randomness: {error}")))?;
    let key = SigningKey::from_bytes(&seed);
    let signer = NoteSigner {
        name: name.to_owned(),
        hash: key_hash(name, &key.verifying_key()),
        key,
    };
    Ok((signer.key_text(), signer.verifier().key_text()))
}

impl NoteSigner {
    /// Parses a signer key text (`PRIVATE+KEY+<name>+<hash>+<base64>`; surrounding
    /// whitespace, such as a file's final newline, is ignored).
    pub fn from_key_text(text: &str) -> Result<Self, VerifiableError> {
        let text = text.trim();
        let rest = text.strip_prefix("PRIVATE+KEY+").ok_or_else(|| {
            VerifiableError::MalformedKey("a signer key starts with PRIVATE+KEY+".to_owned())
        })?;
        let (name, hash, bytes) = split_key(rest)?;
        let seed: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            VerifiableError::MalformedKey("an Ed25519 signer key holds 32 bytes".to_owned())
        })?;
        let key = SigningKey::from_bytes(&seed);
        if key_hash(&name, &key.verifying_key()) != hash {
            return Err(VerifiableError::MalformedKey(format!(
                "key hash {hash:08x} does not match the key named {name:?}"
            )));
        }
        Ok(Self { name, hash, key })
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The signer key text.
    pub fn key_text(&self) -> String {
        let mut bytes = vec![ALG_ED25519];
        bytes.extend_from_slice(self.key.as_bytes());
        format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.hash,
            STANDARD.encode(bytes)
        )
    }

    /// The matching verifier.
    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier {
            name: self.name.clone(),
            hash: self.hash,
            key: self.key.verifying_key(),
        }
    }

    /// Signs `text` (which must end in a newline and hold no empty line at its end) as a
    /// signed note: the text, an empty line, one signature line.
    pub fn sign(&self, text: &str) -> Result<String, VerifiableError> {
        if !text.ends_with('\n') || text.contains("\n\n") {
            return Err(VerifiableError::MalformedNote(
                "a note's text ends in a newline and holds no empty line".to_owned(),
            ));
        }
        let signature = self.key.sign(text.as_bytes());
        let mut bytes = self.hash.to_be_bytes().to_vec();
        bytes.extend_from_slice(&signature.to_bytes());
        Ok(format!(
            "{text}\n{SIGNATURE_PREFIX}{} {}\n",
            self.name,
            STANDARD.encode(bytes)
        ))
    }
}

impl NoteVerifier {
    /// Parses a verifier key text (`<name>+<hash>+<base64>`).
    pub fn from_key_text(text: &str) -> Result<Self, VerifiableError> {
        let (name, hash, bytes) = split_key(text.trim())?;
        let bytes: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            VerifiableError::MalformedKey("an Ed25519 verifier key holds 32 bytes".to_owned())
        })?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|error| VerifiableError::MalformedKey(error.to_string()))?;
        if key_hash(&name, &key) != hash {
            return Err(VerifiableError::MalformedKey(format!(
                "key hash {hash:08x} does not match the key named {name:?}"
            )));
        }
        Ok(Self { name, hash, key })
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The verifier key text.
    pub fn key_text(&self) -> String {
        let mut bytes = vec![ALG_ED25519];
        bytes.extend_from_slice(self.key.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.hash, STANDARD.encode(bytes))
    }

    /// Opens a signed note: returns its text when it carries a valid signature by this key
    /// (signatures by other keys are ignored).
    pub fn open<'n>(&self, note: &'n str) -> Result<&'n str, VerifiableError> {
        let malformed = |what: &str| VerifiableError::MalformedNote(what.to_owned());
        let split = note
            .rfind("\n\n")
            .ok_or_else(|| malformed("no empty line before the signatures"))?;
        let (text, signatures) = (&note[..=split], &note[split + 2..]);
        if !signatures.ends_with('\n') {
            return Err(malformed("the signatures end in a newline"));
        }
        for line in signatures.lines() {
            let rest = line
                .strip_prefix(SIGNATURE_PREFIX)
                .ok_or_else(|| malformed("a signature line starts with an em dash"))?;
            let (name, encoded) = rest
                .split_once(' ')
                .ok_or_else(|| malformed("a signature line is `— <name> <base64>`"))?;
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|_| malformed("a signature is base64"))?;
            if bytes.len() < 4 {
                return Err(malformed("a signature holds a key hash"));
            }
            let (hash, signature) = bytes.split_at(4);
            if name != self.name || hash != self.hash.to_be_bytes() {
                continue;
            }
            let signature = Signature::from_slice(signature)
                .map_err(|_| malformed("an Ed25519 signature holds 64 bytes"))?;
            return self
                .key
                .verify(text.as_bytes(), &signature)
                .map(|()| text)
                .map_err(|_| malformed(&format!("the signature by {name:?} does not verify")));
        }
        Err(VerifiableError::MalformedNote(format!(
            "no signature by the verifier key {:?}",
            self.name
        )))
    }
}

/// `<name>+<hash>+<base64>` → name, hash, key bytes after the Ed25519 algorithm byte.
fn split_key(text: &str) -> Result<(String, u32, Vec<u8>), VerifiableError> {
    let malformed = |what: &str| VerifiableError::MalformedKey(what.to_owned());
    let mut parts = text.splitn(3, '+');
    let (Some(name), Some(hash), Some(encoded)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(malformed("a key is <name>+<hash>+<base64>"));
    };
    check_name(name)?;
    if hash.len() != 8 {
        return Err(malformed("a key hash is eight hex digits"));
    }
    let hash =
        u32::from_str_radix(hash, 16).map_err(|_| malformed("a key hash is eight hex digits"))?;
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|_| malformed("a key's bytes are base64"))?;
    match bytes.split_first() {
        Some((&ALG_ED25519, key)) => Ok((name.to_owned(), hash, key.to_vec())),
        _ => Err(malformed("only Ed25519 keys (algorithm 1) are supported")),
    }
}

fn check_name(name: &str) -> Result<(), VerifiableError> {
    if name.is_empty() || name.contains('+') || name.chars().any(char::is_whitespace) {
        return Err(VerifiableError::MalformedKey(format!(
            "key name {name:?} must be non-empty, without `+` or spaces"
        )));
    }
    Ok(())
}

fn key_hash(name: &str, key: &VerifyingKey) -> u32 {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    hasher.update(b"\n");
    hasher.update([ALG_ED25519]);
    hasher.update(key.as_bytes());
    let digest = hasher.finalize();
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}
