"""Scripts/generate-swift-wire.py's table of model messages converted straight
from their protobuf-c messages (TABLED_MESSAGES): what it writes for one, and the
mistakes in the table it refuses by name rather than leaving a field at zero.
Runs the generator on the real schema, through protoc-c, in a temporary directory."""

import importlib.util
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    out = tmp_path_factory.mktemp("schema")
    subprocess.run(["protoc-c", "--proto_path=Protos", f"--c_out={out}", "--include_source_info",
                    f"--descriptor_set_out={out}/home_v1.source.desc", "Protos/home_v1.proto"],
                   cwd=ROOT, check=True)
    return out


def generate(schema, tabled_changes=None):
    """The generator's output with TABLED_MESSAGES changed as given (a fresh copy
    of the module each time: main() fills module-level tables)."""
    spec = importlib.util.spec_from_file_location("generate_swift_wire", ROOT / "Scripts" / "generate-swift-wire.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.TABLED_MESSAGES.update(tabled_changes or {})
    output = schema / "out.swift"
    generator.sys.argv = ["generate-swift-wire.py", str(schema / "home_v1.source.desc"),
                          str(schema / "home_v1.pb-c.h"), str(output)]
    generator.main()
    return output.read_text()


def test_a_tabled_message_is_read_and_built_field_by_field_on_the_model_type(schema):
    swift = generate(schema)
    assert "extension Room: ProtobufCBridged {" in swift
    assert "struct Room: Sendable" not in swift  # no mirror
    assert "            homeID: source.home_id,\n" in swift
    assert "        built.pointee.home_id = self.homeID\n" in swift
    # An expression of the table, and a field with presence.
    assert "count: Int64(clamping: source.count)," in swift
    assert "uid: (source.uid_present_case == HOME__V1__ORIGIN__UID_PRESENT_UID ? source.uid : nil))" in swift
    # A message carrying one holds the model type.
    assert "let rooms: [Room]" in swift


def test_a_field_no_argument_reads_is_refused_by_name(schema):
    with pytest.raises(SystemExit) as refused:
        generate(schema, {"Room": ("Room", ["id", "name"], {})})
    assert str(refused.value) == "generate-swift-wire: no argument of TABLED_MESSAGES['Room'] reads home_id"


def test_an_argument_reading_a_field_the_schema_lacks_is_refused(schema):
    with pytest.raises(SystemExit) as refused:
        generate(schema, {"Room": ("Room", ["id", "home_id", "name", ("floor", "{floor}")], {})})
    assert "TABLED_MESSAGES reads Room.floor, which is not in the schema" in str(refused.value)


def test_an_encoding_of_a_field_the_schema_lacks_is_refused(schema):
    with pytest.raises(SystemExit) as refused:
        generate(schema, {"Room": ("Room", ["id", "home_id", "name"], {"floor": "floor"})})
    assert "TABLED_MESSAGES encodes Room.floor, which is not in the schema" in str(refused.value)


def test_a_message_with_a_message_field_is_refused(schema):
    with pytest.raises(SystemExit) as refused:
        generate(schema, {"Characteristic": ("Characteristic", ["id"], {})})
    assert "TABLED_MESSAGES handles scalars, strings, enums and repeated ones of them" in str(refused.value)
