//! The `raw` client's codec: requests encoded, answers counted, not decoded.

use bytes::Buf as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// A codec that encodes requests as prost messages and does not decode answers: it
/// takes the body's bytes off the buffer and returns how many there were. The gRPC status
/// is still checked by tonic (a failed call is an error, as with the typed client).
pub(crate) struct RawCodec<Req>(std::marker::PhantomData<Req>);

impl<Req> Default for RawCodec<Req> {
    fn default() -> Self {
        RawCodec(std::marker::PhantomData)
    }
}

pub(crate) struct RawEncoder<Req>(std::marker::PhantomData<Req>);
pub(crate) struct CountingDecoder;

impl<Req: prost::Message + Send + 'static> Codec for RawCodec<Req> {
    type Encode = Req;
    type Decode = usize;
    type Encoder = RawEncoder<Req>;
    type Decoder = CountingDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        RawEncoder(std::marker::PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        CountingDecoder
    }
}

impl<Req: prost::Message> Encoder for RawEncoder<Req> {
    type Item = Req;
    type Error = tonic::Status;

    fn encode(&mut self, item: Req, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        item.encode(dst)
            .map_err(|e| tonic::Status::internal(format!("encoding a request: {e}")))
    }
}

impl Decoder for CountingDecoder {
    type Item = usize;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<usize>, tonic::Status> {
        let n = src.remaining();
        src.advance(n);
        Ok(Some(n))
    }
}
