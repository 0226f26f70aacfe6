// Internals of the disassembler shared by its two files: Disasm.cpp (the listings) and
// DisasmText.cpp (the words of .text, grouped into the blocks of the one block decoder,
// asm/mc/Blocks.h, and the notes on those blocks).
#pragma once

#include "asm/mc/Blocks.h"
#include "isa/Encoding.h"
#include "obj/Object.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pto::as::dis {

/// One printed line of .text: an instruction, or raw data when it does not decode (or does not
/// re-encode to the same bits, so that reassembling the listing reproduces the bytes).
struct Word {
  uint64_t offset = 0;
  unsigned size = 0;  // bytes
  uint64_t value = 0; // as enc::Encoded::value
  unsigned bits = 0;
  std::string text;    // canonical text or a data directive
  std::string comment; // why a word is data
  bool ext = false;    // an extension-space instruction
};

/// One block of the shared decoder and the listed word it opens at.
struct ListedBlock {
  size_t firstWord = 0; // index in TextListing::words
  obj::code::BlockWords block;
  isa::enc::Inst start; // the start word (block.hasStart)
};

/// The words of a .text range as the listing prints them, and the blocks they form.
struct TextListing {
  std::vector<Word> words;         // every byte of the range, in address order
  std::vector<ListedBlock> blocks; // in address order
};

/// Lists [begin, end) of `text`. The blocks are obj::code::decodeBlocks's. A word it cannot
/// decode is listed as data with the decoder's reason, and decoding goes on after it (so a
/// listing never stops at a bad word); the words after it open a new block.
TextListing listText(std::span<const uint8_t> text, uint64_t begin, uint64_t end);

/// The hex column of a listed word.
std::string wordHex(const Word& w);

/// The comment line (no newline) that --blocks prints before block `b` of a listing of `obj`'s
/// words: the block's range, kind, what happens at its end and where it goes.
std::string blockNote(const obj::ObjectFile& obj, const TextListing& listing, const ListedBlock& b);

} // namespace pto::as::dis
