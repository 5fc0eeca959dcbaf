#include "driver/kernel_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include <sstream>

#include "common/error.h"
#include "common/fnv1a.h"
#include "driver/firmware_layout.h"
#include "driver/elf_file.h"

namespace weft {
namespace {

// RISC-V relocation types (psABI) the loader must act on or may ignore.
constexpr uint32_t R_64 = 2, R_32 = 1;
constexpr uint32_t R_HI20 = 26, R_LO12_I = 27, R_LO12_S = 28, R_TPREL_HI20 = 30;

// "name:u32 name:u64 ..." (WEFT_KERNEL_ARG_NAMES) as fields with offsets, a
// u64 at the next multiple of 8; the kernel's build checked the total.
void read_arg_names(KernelImage& img, const std::string& section) {
    const std::string text = section.substr(0, section.find('\0'));
    std::istringstream words(text);
    std::string word;
    uint32_t offset = 0;
    while (words >> word) {
        const size_t colon = word.find(':');
        const std::string type = colon == std::string::npos ? "" : word.substr(colon + 1);
        if (colon == 0 || (type != "u32" && type != "u64"))
            throw Error("kernel " + img.path + ": argument name '" + word + "' is not NAME:u32 or NAME:u64");
        const uint32_t bytes = type == "u64" ? 8 : 4;
        offset = (offset + bytes - 1) / bytes * bytes;
        img.arg_fields.push_back({word.substr(0, colon), bytes, offset});
        offset += bytes;
    }
    img.args_size = offset;
}

}  // namespace

KernelImage load_kernel_image(const std::string& path) {
    auto fail = [&](const std::string& msg) -> Error { return Error("kernel " + path + ": " + msg); };
    if (elf_version(EV_CURRENT) == EV_NONE) throw fail("libelf is unusable");
    ElfFile f;
    f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) throw fail(std::string("cannot open: ") + strerror(errno) + " (was it built? run 'make')");
    f.elf = elf_begin(f.fd, ELF_C_READ, nullptr);
    if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) throw fail("not an ELF file");
    GElf_Ehdr eh;
    if (!gelf_getehdr(f.elf, &eh)) throw fail("unreadable ELF header");
    const int elf_class = gelf_getclass(f.elf);
    if (eh.e_machine != EM_RISCV || (elf_class != ELFCLASS64 && elf_class != ELFCLASS32))
        throw fail("not a RISC-V ELF");

    KernelImage img;
    img.path = path;
    img.name = path.substr(path.rfind('/') + 1);
    img.xlen = elf_class == ELFCLASS32 ? 32 : 64;
    if (img.name.size() > 4 && img.name.ends_with(".elf")) img.name.resize(img.name.size() - 4);

    size_t nph = 0;
    elf_getphdrnum(f.elf, &nph);
    uint64_t end = 0;
    bool any = false;
    for (size_t i = 0; i < nph; ++i) {
        GElf_Phdr ph;
        gelf_getphdr(f.elf, static_cast<int>(i), &ph);
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        any = true;
        end = std::max(end, ph.p_vaddr + ph.p_memsz);
        if (ph.p_flags & PF_X) img.code_size = std::max(img.code_size, ph.p_vaddr + ph.p_filesz);
    }
    if (!any) throw fail("no loadable segments");
    if (end > (64u << 20)) throw fail("image spans " + std::to_string(end) + " bytes; is it linked at address 0?");
    img.bytes.assign(end, 0);
    for (size_t i = 0; i < nph; ++i) {
        GElf_Phdr ph;
        gelf_getphdr(f.elf, static_cast<int>(i), &ph);
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0) continue;
        if (pread(f.fd, img.bytes.data() + ph.p_vaddr, ph.p_filesz, static_cast<off_t>(ph.p_offset)) !=
            static_cast<ssize_t>(ph.p_filesz))
            throw fail("truncated segment");
    }
    img.entry = eh.e_entry;
    if (img.entry >= img.code_size) throw fail("entry point outside the code");

    // Relocations kept by --emit-relocs, for sections that are loaded.
    bool saw_relocs = false;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(f.elf, scn))) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        if (sh.sh_type == SHT_REL) throw fail("REL relocations are not supported");
        if (sh.sh_type != SHT_RELA) continue;
        Elf_Scn* target = elf_getscn(f.elf, sh.sh_info);
        GElf_Shdr tsh;
        if (!target || !gelf_getshdr(target, &tsh) || !(tsh.sh_flags & SHF_ALLOC)) continue;
        saw_relocs = true;
        Elf_Scn* symscn = elf_getscn(f.elf, sh.sh_link);
        Elf_Data* syms = symscn ? elf_getdata(symscn, nullptr) : nullptr;
        Elf_Data* data = elf_getdata(scn, nullptr);
        const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; ++i) {
            GElf_Rela r;
            gelf_getrela(data, static_cast<int>(i), &r);
            const uint32_t type = GELF_R_TYPE(r.r_info);
            if (type == R_HI20 || type == R_LO12_I || type == R_LO12_S || type == R_TPREL_HI20) {
                std::ostringstream o;
                o << "absolute code relocation (type " << type << ") at 0x" << std::hex << r.r_offset
                  << ": build kernels with -mcmodel=medany";
                throw fail(o.str());
            }
            if (type != R_64 && type != R_32) continue;  // PC-relative and differences move with the image
            GElf_Sym sym{};
            if (syms) gelf_getsym(syms, static_cast<int>(GELF_R_SYM(r.r_info)), &sym);
            if (sym.st_shndx == SHN_ABS) continue;  // a constant, not an address
            const uint64_t width = type == R_64 ? 8 : 4;
            if (r.r_offset + width > img.bytes.size()) throw fail("relocation outside the image");
            (type == R_64 ? img.abs64 : img.abs32).push_back(r.r_offset);
        }
    }
    if (!saw_relocs) throw fail("no relocation sections: link kernels with -Wl,-q (--emit-relocs)");
    img.content_hash = fnv1a(img.bytes);
    img.layout = read_firmware_layout(path);
    read_arg_names(img, section_bytes(path, ".weft_args"));
    return img;
}

std::string KernelImage::arg_fields_text() const {
    std::string text;
    for (const ArgField& f : arg_fields) text += (text.empty() ? "" : " ") + f.name + (f.bytes == 8 ? ":u64" : ":u32");
    return text;
}

std::vector<uint32_t> named_argument_words(const KernelImage& kernel,
                                           const std::vector<std::pair<std::string, uint64_t>>& values) {
    const std::string fields = kernel.arg_fields_text();
    if (kernel.arg_fields.empty())
        throw Error("kernel '" + kernel.name +
                    "' does not name its arguments (WEFT_KERNEL_ARG_NAMES): give them as words in order");
    std::vector<uint8_t> bytes(kernel.args_size, 0);
    std::vector<bool> given(kernel.arg_fields.size(), false);
    for (const auto& [name, value] : values) {
        size_t i = 0;
        while (i < kernel.arg_fields.size() && kernel.arg_fields[i].name != name) ++i;
        if (i == kernel.arg_fields.size())
            throw Error("kernel '" + kernel.name + "' has no argument '" + name + "' (its arguments: " + fields + ")");
        const KernelImage::ArgField& f = kernel.arg_fields[i];
        if (given[i]) throw Error("argument '" + name + "' given twice");
        if (f.bytes == 4 && value > UINT32_MAX)
            throw Error("argument '" + name + "' is a u32; " + std::to_string(value) + " does not fit");
        given[i] = true;
        memcpy(bytes.data() + f.offset, &value, f.bytes);  // little-endian, as the cores
    }
    std::string missing;
    for (size_t i = 0; i < given.size(); ++i)  // a field named pad... is the struct's padding: 0 unless given
        if (!given[i] && kernel.arg_fields[i].name.rfind("pad", 0) != 0)
            missing += (missing.empty() ? "" : ", ") + kernel.arg_fields[i].name;
    if (!missing.empty())
        throw Error("kernel '" + kernel.name + "' needs every argument; missing: " + missing +
                    " (its arguments: " + fields + ")");
    std::vector<uint32_t> words(bytes.size() / 4);
    memcpy(words.data(), bytes.data(), words.size() * 4);
    return words;
}

std::vector<uint8_t> KernelImage::relocated(uint64_t base) const {
    std::vector<uint8_t> out = bytes;
    for (uint64_t off : abs64) {
        uint64_t v;
        memcpy(&v, out.data() + off, 8);
        v += base;
        memcpy(out.data() + off, &v, 8);
    }
    for (uint64_t off : abs32) {
        uint32_t v;
        memcpy(&v, out.data() + off, 4);
        uint64_t moved = uint64_t(v) + base;
        if (moved > 0xffffffffull) throw Error("kernel " + path + ": 32-bit address does not fit at this base");
        v = static_cast<uint32_t>(moved);
        memcpy(out.data() + off, &v, 4);
    }
    return out;
}

}  // namespace weft
