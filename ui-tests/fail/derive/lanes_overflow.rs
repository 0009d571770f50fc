// Rule: the lanes of an element fit DLPack's u16 lane count.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLUInt, bits = 8, lanes = 40000)]
#[repr(transparent)]
struct Block([u8; 40000]);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct TwoBlocks(Block, Block);

fn main() {}
