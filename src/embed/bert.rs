//! The built-in model's encoder: a BERT forward pass (MiniLM-L6 is one) on
//! candle's tensors. The model crate that used to provide it compiled a
//! hundred other models with it, over a minute of every clean release build
//! (docs/performance.md, "Build time"); this is the one kebab runs.
//!
//! Per layer: self-attention (queries, keys and values per head, scaled dot
//! products, padding masked out, softmax), a dense projection added back to
//! its input and normalised, then the feed-forward block (dense, GELU,
//! dense), added back and normalised in turn.

use candle_core::{D, DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};

/// The fields of the model's `config.json` the forward pass needs.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
    hidden_act: String,
}

pub struct Bert {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    heads: usize,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    out: Linear,
    out_norm: LayerNorm,
}

impl Bert {
    /// The weights as a Hugging Face BERT checkpoint names them.
    pub fn load(vb: VarBuilder, cfg: &Config) -> Result<Bert> {
        // Every sentence-transformers MiniLM uses the exact (erf) GELU.
        if cfg.hidden_act != "gelu" {
            candle_core::bail!("hidden_act {:?} is not supported (only \"gelu\")", cfg.hidden_act);
        }
        if cfg.num_attention_heads == 0 || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads) {
            candle_core::bail!("hidden_size {} is not a multiple of num_attention_heads {}", cfg.hidden_size, cfg.num_attention_heads);
        }
        let (h, eps) = (cfg.hidden_size, cfg.layer_norm_eps);
        let e = vb.pp("embeddings");
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let (attention, output) = (l.pp("attention"), l.pp("output"));
                Ok(Layer {
                    query: linear(h, h, attention.pp("self.query"))?,
                    key: linear(h, h, attention.pp("self.key"))?,
                    value: linear(h, h, attention.pp("self.value"))?,
                    heads: cfg.num_attention_heads,
                    attention_out: linear(h, h, attention.pp("output.dense"))?,
                    attention_norm: layer_norm(h, eps, attention.pp("output.LayerNorm"))?,
                    intermediate: linear(h, cfg.intermediate_size, l.pp("intermediate.dense"))?,
                    out: linear(cfg.intermediate_size, h, output.pp("dense"))?,
                    out_norm: layer_norm(h, eps, output.pp("LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            words: embedding(cfg.vocab_size, h, e.pp("word_embeddings"))?,
            positions: embedding(cfg.max_position_embeddings, h, e.pp("position_embeddings"))?,
            types: embedding(cfg.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            norm: layer_norm(h, eps, e.pp("LayerNorm"))?,
            layers,
        })
    }

    /// The last layer's hidden states, `(batch, tokens, hidden)`, for token
    /// ids, token type ids and the attention mask (1 for a real token, 0 for
    /// padding), each `(batch, tokens)`.
    pub fn forward(&self, ids: &Tensor, types: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let len = ids.dim(1)?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = (self.words.forward(ids)? + self.types.forward(types)?)?;
        let mut x = self.norm.forward(&x.broadcast_add(&self.positions.forward(&positions)?)?)?;
        // Added to the attention scores: 0 for a real token, the lowest f32
        // for padding, so softmax gives padding no weight. (batch, 1, 1, tokens)
        let blocked = ((mask.to_dtype(DType::F32)? * -1.0)? + 1.0)?;
        let blocked = (blocked * f64::from(f32::MIN))?.unsqueeze(1)?.unsqueeze(1)?;
        for layer in &self.layers {
            x = layer.forward(&x, &blocked)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(&self, x: &Tensor, blocked: &Tensor) -> Result<Tensor> {
        let attended = self.attention(x, blocked)?;
        let x = self.attention_norm.forward(&(self.attention_out.forward(&attended)? + x)?)?;
        let inner = self.intermediate.forward(&x)?.gelu_erf()?;
        self.out_norm.forward(&(self.out.forward(&inner)? + x)?)
    }

    /// Multi-head self-attention, heads joined back: `(batch, tokens, hidden)`.
    fn attention(&self, x: &Tensor, blocked: &Tensor) -> Result<Tensor> {
        let (batch, len, hidden) = x.dims3()?;
        let size = hidden / self.heads;
        // (batch, heads, tokens, size)
        let split = |t: Tensor| t.reshape((batch, len, self.heads, size))?.transpose(1, 2)?.contiguous();
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (size as f64).sqrt())?.broadcast_add(blocked)?;
        let weights = candle_nn::ops::softmax(&scores, D::Minus1)?;
        weights.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((batch, len, hidden))
    }
}
