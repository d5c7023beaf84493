#!/usr/bin/env python3
"""Generates the Swift half of the protobuf-c bridge from the schema.

Reads the FileDescriptorSet of Protos/ (with source info, for the comments) and
writes Sources/HomeWire/Generated/home_v1.wire.swift:

  - for every message, a Swift value type mirroring it field for field (in the
    `Proto` namespace, internal to HomeWire, with `let`s and no defaults, so that
    a field added to the schema is a compile error in every mapping that builds
    the message; or, for every request and response and what they carry, the
    public API type itself, with the model's types (MODEL_MESSAGES, MODEL_ENUMS)
    in its fields), with `init(c:)` copying a protobuf-c tree into it (converting
    the model's types once, through their `WireConvertible` conversions) and
    `build(in:)` building one in a `CArena`;
  - for every flat message the model owns (TABLED_MESSAGES), `init(c:)` and
    `build(in:)` on the model's type itself, from a table of its initializer's
    arguments and its fields' expressions: no mirror, no conversion by hand;
  - for every enum the model owns, its number table: `wireNumber` and
    `init?(wireNumber:)` on the model's Swift enum, as exhaustive switches, so
    that a case missing on either side is a compile error, not a wrong number.

What a message means for the model (`Accessory`, `HomeEvent`, ...) is mapped by
hand in Sources/HomeWire/Codec/, in plain Swift: no C pointer appears there.
CONTRIBUTING.md ("The wire in Swift") states what is generated and what is not.

Run by Scripts/generate-proto.sh, whose --check compares the committed output.
  generate-swift-wire.py DESCRIPTOR_SET HEADER OUTPUT
"""
import re
import sys

from google.protobuf import descriptor_pb2

F = descriptor_pb2.FieldDescriptorProto

# Proto enums whose Swift type the model owns. The cases are found by name: the
# value's name without the enum's common prefix, in lowerCamelCase. Values with
# no Swift case (the `*_UNSPECIFIED` zeros) decode to nil.
MODEL_ENUMS = {
    "Format": "CharacteristicFormat",
    "Unit": "CharacteristicUnit",
    "AccessoryCategory": "AccessoryCategory",
    "ActionSetKind": "ActionSetKind",
    "Recurrence": "Recurrence",
    "Comparison": "Comparison",
    "SunEvent": "SunEvent",
    "EventKind": "EventKind",
    "OriginKind": "Origin.Kind",
    "LayoutAction": "LayoutChange.Action",
    "ObjectKind": "ObjectKind",
    "SlowConsumerPolicy": "SlowConsumerPolicy",
    "MarkerKind": "StreamMarker.Kind",
    "Role": "Role",
}
# Numbers with no case on the Swift side.
UNMAPPED_ENUM_VALUES = {
    "FORMAT_UNSPECIFIED",
    "CATEGORY_UNSPECIFIED",
    "EVENT_UNSPECIFIED",
    "OBJECT_UNSPECIFIED",
    "ROLE_UNSPECIFIED",
}
# StatusCode is `HomeError.Code` (a struct with gRPC's numbers), mapped by hand.
HAND_MAPPED_ENUMS = {"StatusCode"}

# Messages whose Swift type is a model type (HomeModel): (the type, whether its
# conversion throws). Each has one hand-written conversion to and from its
# `Proto` mirror (`WireConvertible`, in Codec/), which every generated message
# carrying it calls: a field of one of these is typed as the model's type.
MODEL_MESSAGES = {
    "Value": ("CharacteristicValue", True),
    "Origin": ("Origin", False),
    "Characteristic": ("Characteristic", False),
    "CharacteristicRead": ("CharacteristicRead", False),
    "CharacteristicWrite": ("CharacteristicWrite", True),
    "WriteResult": ("WriteResult", False),
    "SubscriptionFilter": ("SubscriptionFilter", True),
    "Event": ("HomeEvent", True),
    "CharacteristicType": ("CharacteristicTypeInfo", False),
}
# Messages whose model type is converted straight from and to its protobuf-c
# message by this table: no mirror in between and no conversion by hand. Each
# gives the model type, the arguments of the model's initializer that decoding
# calls (in its order) and, for encoding, each field's expression of the model
# value where it is not the property of the field's name (`self.` + the name in
# lowerCamelCase). An argument that is a field's name alone is that field's value
# under its lowerCamelCase label; (label, expression) computes it from the fields'
# values, each written {field} (an enum field's value is its number). Every field
# must be read by an argument: a new field is one line here, and forgetting it is
# an error of this script, not a silent zero.
TABLED_MESSAGES = {
    "CharacteristicProperties": (
        "CharacteristicProperties",
        ["readable", "writable", "supports_event_notification", "hidden", "write_response"], {}),
    "Room": ("Room", ["id", "home_id", "name"], {}),
    "Zone": ("Zone", ["id", "home_id", "name", "room_ids"], {}),
    "ServiceGroup": ("ServiceGroup", ["id", "home_id", "name", "service_ids"], {}),
    "Origin": (
        "Origin", [("kind", ".fromWire({kind}, default: .unknown)"), "connection_id", "name", "uid"],
        {"kind": "kind.wireNumber"}),
    "RollupPoint": (
        "RollupPoint",
        ["characteristic_id", "width_ms", "start_ms", ("count", "Int64(clamping: {count})"), "min", "max", "sum",
         "last", "last_ms"],
        {"count": "UInt64(Swift.max(count, 0))"}),
    "ServiceType": ("ServiceTypeInfo", ["uuid", "name", "required_characteristics", "optional_characteristics"], {}),
    "Location": ("GeoLocation", ["latitude", "longitude"], {}),
    "LayoutChange": (
        "LayoutChange",
        [("action", ".fromWire({action}, default: .updated)"), ("object", ".fromWire({object}, default: .home)"),
         "object_id", "home_id", "name", "parent_id"],
        {"action": "action.wireNumber", "object": "object.wireNumber"}),
    "StreamMarker": (
        "StreamMarker", [("kind", ".fromWire({kind}, default: .none)"), "seq", "gap_from", "gap_to", "reason"],
        {"kind": "kind.wireNumber"}),
    # A timeout of 0 is the default.
    "TriggerCommand": (
        "TriggerCommand",
        ["program", "arguments", ("timeoutMs", "{timeout_ms} == 0 ? TriggerCommand.defaultTimeoutMs : {timeout_ms}")],
        {}),
}
# Model types with an empty value: a field of one is not optional; it is left
# out of the encoding when empty, as every protobuf runtime leaves out an empty
# message, and reads as empty when absent.
MODEL_EMPTY_VALUES = {"SubscriptionFilter": "SubscriptionFilter()"}
# Model types that are not Hashable: a message carrying one is only Sendable.
MODEL_NOT_HASHABLE = {"CharacteristicType"}
# Extra arguments to a model conversion for one field: a client's write carries
# its condition; a provider's command answers and reports ignore it.
CONVERSION_ARGUMENTS = {("WriteCharacteristicsRequest", "writes"): "conditional: true"}

# The requests and responses of `service HomeService` whose Swift type is written
# by hand, and why. Every other request and response, and every message they
# carry that the model does not own (MODEL_MESSAGES), is generated as the public
# API type itself: a new method's messages need nothing here.
HAND_WRITTEN_MESSAGES = {
    "GetHomeResponse": "a HomeGraph, sent in pages (Codec/Messages+Codec.swift)",
    "ListAccessoriesResponse": "the model's objects in tables (Codec/Messages+Codec.swift)",
    "RegisterAccessoriesRequest": "the model's ProvidedAccessory, each error naming the item's place",
    "RegisterAccessoriesResponse": "the model's objects in tables (Codec/Providers+Codec.swift)",
    "LayoutRequest": "the model's LayoutOperation (Codec/Layout+Codec.swift)",
    "SubscribeResponse": "the stream's hot path (Internal/EventCodec.swift)",
    "ProviderCommand": "the provider hub's command kinds (Codec/Providers+Codec.swift)",
    "CommandAnswer": "HomeError statuses, each number checked (Codec/Providers+Codec.swift)",
}

# Generated API types whose access or defaults are not `public` and zeros, and
# messages outside the methods' that are API types too.
PUBLIC_OVERRIDES = {
    "Hello": ("@_spi(Wire) public", {"protocol_version": "homeProtocolVersion"}),
    "HelloReply": ("public", {"protocol_version": "homeProtocolVersion"}),
    "CallOpen": ("@_spi(Wire) public", {}),
    # Carried by the hand-written ProviderCommand.
    "ProviderOpened": ("public", {}),
}

# Every generated API type with its access and defaults: filled by main().
PUBLIC_MESSAGES = {}


def public_messages(file):
    """PUBLIC_OVERRIDES, and the methods' messages and what they carry, less the
    hand-written ones and the model's."""
    messages = {m.name: m for m in file.message_type}
    for name in list(HAND_WRITTEN_MESSAGES) + list(MODEL_MESSAGES) + list(TABLED_MESSAGES) + list(PUBLIC_OVERRIDES):
        if name not in messages:
            sys.exit(f"generate-swift-wire: message {name} is configured but not in the schema")
    result = dict(PUBLIC_OVERRIDES)
    pending = [short(t) for service in file.service for m in service.method for t in (m.input_type, m.output_type)]
    while pending:
        name = pending.pop()
        if name in result or name in HAND_WRITTEN_MESSAGES or name in MODEL_MESSAGES or name in TABLED_MESSAGES:
            continue
        result[name] = ("public", {})
        pending += [short(f.type_name) for f in messages[name].field if f.type == F.TYPE_MESSAGE]
    return result


# Methods whose Swift response type is not the schema's message of that name:
# GetHome's response is taken as a page, which GetHomeAssembler puts together.
METHOD_RESPONSE_TYPES = {"GetHome": "GetHomePage"}

SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout", "internal", "let", "operator", "private", "protocol", "public", "rethrows",
    "static", "struct", "subscript", "typealias", "var", "break", "case", "continue", "default",
    "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch",
    "where", "while", "as", "catch", "false", "is", "nil", "super", "self", "Self", "throw", "throws",
    "true", "try", "Type", "Protocol",
}

SCALARS = {
    F.TYPE_UINT64: ("UInt64", "0"),
    F.TYPE_INT64: ("Int64", "0"),
    F.TYPE_UINT32: ("UInt32", "0"),
    F.TYPE_INT32: ("Int32", "0"),
    F.TYPE_DOUBLE: ("Double", "0"),
    F.TYPE_FLOAT: ("Float", "0"),
}


def camel(snake, upper_first=False):
    """`home_id` -> `homeID`, `linked_service_ids` -> `linkedServiceIDs`."""
    parts = snake.lower().split("_")
    out = []
    for index, part in enumerate(parts):
        if index == 0 and not upper_first:
            out.append(part)
        elif part == "id":
            out.append("ID")
        elif part == "ids":
            out.append("IDs")
        elif part in ("uid", "gid", "pid"):
            out.append(part.upper())
        else:
            out.append(part[:1].upper() + part[1:])
    return "".join(out)


def escaped(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def c_snake(name):
    """protoc-c's lower-case form of a CamelCase name: `GetHomeRequest` -> `get_home_request`."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


class Schema:
    def __init__(self, file, header):
        self.file = file
        self.header = header
        self.messages = {m.name: m for m in file.message_type}
        self.enums = {e.name: e for e in file.enum_type}
        self.comments = {}
        for location in file.source_code_info.location:
            if location.leading_comments:
                self.comments[tuple(location.path)] = location.leading_comments
        # What clients send: the methods' requests and everything in them.
        self.requests = set()
        pending = [short(m.input_type) for service in file.service for m in service.method]
        while pending:
            name = pending.pop()
            if name in self.requests:
                continue
            self.requests.add(name)
            pending += [short(f.type_name) for f in self.messages[name].field if f.type == F.TYPE_MESSAGE]

    def nested(self, name):
        return [short(f.type_name) for f in self.messages[name].field if f.type == F.TYPE_MESSAGE]

    def throws(self, name):
        """Whether decoding the message's Swift type can fail (a model conversion
        that checks, or a client's enum number to check)."""
        if name in TABLED_MESSAGES:
            return False
        message = self.messages[name]
        public = name in PUBLIC_MESSAGES
        for field in message.field:
            kind = short(field.type_name)
            if field.type == F.TYPE_MESSAGE:
                if public and kind in MODEL_MESSAGES:
                    if MODEL_MESSAGES[kind][1]:
                        return True
                elif self.throws(kind):
                    return True
            elif field.type == F.TYPE_ENUM and public and kind in MODEL_ENUMS and name in self.requests:
                return True
        return False

    def hashable(self, name):
        return all(n not in MODEL_NOT_HASHABLE and self.hashable(n) for n in self.nested(name))

    def doc(self, path, indent):
        text = self.comments.get(tuple(path))
        if not text:
            return []
        lines = text.rstrip().split("\n")
        return [f"{indent}///{(' ' + line.strip()) if line.strip() else ''}" for line in lines]

    def need(self, symbol):
        if not re.search(r"\b" + re.escape(symbol) + r"\b", self.header):
            sys.exit(f"generate-swift-wire: {symbol} is not in the protoc-c header")
        return symbol


def short(type_name):
    return type_name.rsplit(".", 1)[-1]


def swift_message_type(name):
    return name if name in PUBLIC_MESSAGES else f"Proto.{name}"


def enum_zero_case(enum):
    """The Swift case of number 0, or None when 0 has none (the field is then optional)."""
    zero = [v for v in enum.value if v.number == 0][0]
    if zero.name in UNMAPPED_ENUM_VALUES:
        return None
    prefix = common_prefix([v.name for v in enum.value])
    return "." + escaped(camel(zero.name[len(prefix):]))


class MessageWriter:
    def __init__(self, schema, index, message):
        self.schema = schema
        self.index = index
        self.message = message
        self.name = message.name
        self.c_type = schema.need(f"Home__V1__{self.name}")
        self.c_prefix = f"home__v1__{c_snake(self.name)}"
        schema.need(self.c_prefix + "__init")
        public = PUBLIC_MESSAGES.get(self.name)
        self.access = public[0] + " " if public else ""
        self.defaults = public[1] if public else {}
        self.swift_type = swift_message_type(self.name)
        # A client's request is read strictly: an enum number the schema does not
        # define is INVALID_ARGUMENT naming the field; what the daemon sent is read
        # leniently (a newer daemon may know more numbers).
        self.strict = self.name in schema.requests
        # oneof index -> (name, [fields]); a oneof with one field is presence.
        self.oneofs = {}
        for field in message.field:
            if field.HasField("oneof_index"):
                self.oneofs.setdefault(field.oneof_index, []).append(field)

    def is_presence(self, field):
        return field.HasField("oneof_index") and len(self.oneofs[field.oneof_index]) == 1

    def oneof_name(self, index):
        return self.message.oneof_decl[index].name

    def case_constant(self, field):
        oneof = self.oneof_name(field.oneof_index)
        return self.schema.need(f"HOME__V1__{c_snake(self.name).upper()}__{oneof.upper()}_{field.name.upper()}")

    def case_type(self, field):
        oneof = self.oneof_name(field.oneof_index)
        return self.schema.need(f"{self.c_type}__{camel(oneof, upper_first=True)}Case")

    # -- what a field is in Swift ------------------------------------------------

    def tabled(self, field):
        """The model type of a message field converted by TABLED_MESSAGES, else None."""
        if field.type != F.TYPE_MESSAGE:
            return None
        tabled = TABLED_MESSAGES.get(short(field.type_name))
        return tabled[0] if tabled else None

    def model_message(self, field):
        """The model type of a message field of a public message, else None."""
        if not self.access or field.type != F.TYPE_MESSAGE:
            return None
        model = MODEL_MESSAGES.get(short(field.type_name))
        return model[0] if model else None

    def model_enum(self, field):
        """The model's enum of an enum field of a public message, else None."""
        if not self.access or field.type != F.TYPE_ENUM:
            return None
        return MODEL_ENUMS.get(short(field.type_name))

    def enum_zero(self, field):
        return enum_zero_case(self.schema.enums[short(field.type_name)])

    def field_throws(self, field):
        if self.tabled(field):
            return False
        if self.model_message(field):
            return MODEL_MESSAGES[short(field.type_name)][1]
        if self.model_enum(field):
            return self.strict
        if field.type == F.TYPE_MESSAGE:
            return self.schema.throws(short(field.type_name))
        return False

    def value_type(self, field):
        """The Swift type of one value of the field (an element, when repeated)."""
        if field.type in SCALARS:
            return SCALARS[field.type][0]
        if field.type == F.TYPE_BOOL:
            return "Bool"
        if field.type == F.TYPE_STRING:
            return "String"
        if field.type == F.TYPE_BYTES:
            return "[UInt8]"
        if field.type == F.TYPE_ENUM:
            return self.model_enum(field) or "UInt32"
        if field.type == F.TYPE_MESSAGE:
            model = self.tabled(field) or self.model_message(field)
            if model:
                return model
            name = short(field.type_name)
            if self.access and name not in PUBLIC_MESSAGES:
                sys.exit(f"generate-swift-wire: public {self.name}.{field.name} is a {name}, which is neither "
                         "public nor a model type: add it to PUBLIC_OVERRIDES or MODEL_MESSAGES")
            return swift_message_type(name)
        sys.exit(f"generate-swift-wire: {self.name}.{field.name} has a type this generator does not handle")

    def swift_field(self, field):
        """(Swift type, default) of the whole field."""
        if field.label == F.LABEL_REPEATED:
            return f"[{self.value_type(field)}]", "[]"
        empty = MODEL_EMPTY_VALUES.get(short(field.type_name)) if self.model_message(field) else None
        if empty:
            return self.value_type(field), empty
        if self.model_enum(field) and not self.is_presence(field):
            zero = self.enum_zero(field)
            return (self.value_type(field), zero) if zero else (f"{self.value_type(field)}?", "nil")
        if field.type == F.TYPE_MESSAGE or self.is_presence(field):
            return f"{self.value_type(field)}?", "nil"
        return self.value_type(field), self.default(field)

    def default(self, field):
        if field.name in self.defaults:
            return self.defaults[field.name]
        if field.type in SCALARS:
            return "0"
        return {F.TYPE_BOOL: "false", F.TYPE_STRING: '""', F.TYPE_BYTES: "[]", F.TYPE_ENUM: "0"}[field.type]

    def enum_comment(self, field):
        if field.type != F.TYPE_ENUM or self.model_enum(field):
            return ""
        enum = short(field.type_name)
        swift = MODEL_ENUMS.get(enum, "HomeError.Code" if enum in HAND_MAPPED_ENUMS else None)
        return f" A `home.v1.{enum}` number" + (f" (see `{swift}`)." if swift else ".")

    # -- the type --------------------------------------------------------------

    def member(self, name, swift, default):
        """A stored property. The API's types are `var`s with defaults; the internal
        mirrors are `let`s without: every mapping that builds one must say what each
        field is, so a field added to the schema is a compile error there, not a
        silent zero on the wire."""
        if self.access:
            return f"{self.access}var {name}: {swift} = {default}"
        return f"let {name}: {swift}"

    def declaration(self):
        lines = []
        indent = "    " if not self.access else ""
        lines += self.schema.doc([4, self.index], indent)
        # The API's types compare; the internal mirrors need not.
        hashable = self.access and self.schema.hashable(self.name)
        conformances = "Hashable, Sendable" if hashable else "Sendable"
        lines.append(f"{indent}{self.access}struct {self.name}: {conformances} {{")
        inner = indent + "    "
        emitted_oneofs = set()
        parameters = []
        for number, field in enumerate(self.message.field):
            field_doc = self.schema.doc([4, self.index, 2, number], inner)
            name = escaped(camel(field.name))
            if field.HasField("oneof_index") and not self.is_presence(field):
                if field.oneof_index in emitted_oneofs:
                    continue
                emitted_oneofs.add(field.oneof_index)
                oneof = self.oneof_name(field.oneof_index)
                type_name = camel(oneof, upper_first=True)
                lines.append(f"{inner}{self.access}enum {type_name}: {conformances} {{")
                for member in self.oneofs[field.oneof_index]:
                    member_index = list(self.message.field).index(member)
                    lines += self.schema.doc([4, self.index, 2, member_index], inner + "    ")
                    lines.append(f"{inner}    case {escaped(camel(member.name))}({self.value_type(member)})")
                lines.append(f"{inner}}}")
                lines.append(f"{inner}{self.member(escaped(camel(oneof)), f'{type_name}?', 'nil')}")
                parameters.append((escaped(camel(oneof)), f"{type_name}?", "nil"))
                continue
            if not field_doc and self.is_presence(field):
                field_doc = self.schema.doc([4, self.index, 8, field.oneof_index], inner)
            lines += field_doc
            if self.enum_comment(field):
                lines.append(f"{inner}///{self.enum_comment(field)}")
            swift, default = self.swift_field(field)
            lines.append(f"{inner}{self.member(name, swift, default)}")
            parameters.append((name, swift, default))
        if self.access:
            # A public type needs its memberwise initializer spelled out.
            lines.append("")
            if parameters:
                signature = ", ".join(f"{p[0].strip('`')}: {p[1]} = {p[2]}" for p in parameters)
                lines.append(f"{inner}{self.access}init({signature}) {{")
                for p in parameters:
                    lines.append(f"{inner}    self.{p[0]} = {p[0]}")
                lines.append(f"{inner}}}")
            else:
                lines.append(f"{inner}{self.access}init() {{}}")
        lines.append(f"{indent}}}")
        return lines

    # -- C -> Swift --------------------------------------------------------------

    def decode_value(self, field, expression):
        """A Swift expression for one C value of the field (not a message)."""
        if field.type in SCALARS:
            return expression
        if field.type == F.TYPE_BOOL:
            return f"{expression} != 0"
        if field.type == F.TYPE_STRING:
            return f"swiftString({expression})"
        if field.type == F.TYPE_BYTES:
            return f"swiftBytes({expression})"
        if field.type == F.TYPE_ENUM:
            enum = self.model_enum(field)
            raw = f"{expression}.rawValue"
            if not enum:
                return raw
            optional = self.enum_zero(field) is None
            if self.strict:
                strict = f'try {enum}.fromWire({raw}, field: "{self.name}.{field.name}")'
                return f"{raw} == 0 ? nil : {strict}" if optional else strict
            return f"{enum}(wireNumber: {raw})" if optional else f"{enum}.fromWire({raw}, default: {self.enum_zero(field)})"
        sys.exit(f"generate-swift-wire: {self.name}.{field.name}: decode_value of a message")

    def decode_message(self, field, pointee):
        """A Swift expression for one C message (`pointee`) of the field."""
        name = short(field.type_name)
        model = self.model_message(field)
        if self.tabled(field):
            call = f"{self.tabled(field)}(c: {pointee})"
        elif model:
            arguments = CONVERSION_ARGUMENTS.get((self.name, field.name))
            extra = f", {arguments}" if arguments else ""
            call = f"{model}(wire: Proto.{name}(c: {pointee}){extra})"
        else:
            call = f"{self.value_type(field)}(c: {pointee})"
        return f"try {call}" if self.field_throws(field) else call

    def decoder(self):
        throws = self.schema.throws(self.name)
        if throws and not self.access:
            sys.exit(f"generate-swift-wire: the mirror {self.name} holds a message whose decoding throws")
        signature = f"init(c source: {self.c_type})" + (" throws(HomeError)" if throws else "")
        lines = [
            f"extension {self.swift_type}: ProtobufCBridged {{",
            f"    static let messageName = \"home.v1.{self.name}\"",
            f"    static var unpack: Unpacker<{self.c_type}> {{ {self.schema.need(self.c_prefix + '__unpack')} }}",
            "",
        ]
        fields = list(self.message.field)
        if not fields:
            lines.append(f"    {signature} {{ self.init() }}")
        else:
            lines.append(f"    {signature} {{")
            if self.access:
                lines.append("        self.init()")
            done = set()
            for field in fields:
                name = escaped(camel(field.name))
                c = f"source.{field.name}"
                if field.HasField("oneof_index") and not self.is_presence(field):
                    if field.oneof_index in done:
                        continue
                    done.add(field.oneof_index)
                    oneof = self.oneof_name(field.oneof_index)
                    lines.append(f"        switch source.{oneof}_case {{")
                    for member in self.oneofs[field.oneof_index]:
                        case = escaped(camel(member.name))
                        member_c = f"source.{member.name}"
                        lines.append(f"        case {self.case_constant(member)}:")
                        if member.type == F.TYPE_MESSAGE:
                            if self.field_throws(member):
                                sys.exit(f"generate-swift-wire: {self.name}.{member.name}: a throwing oneof member")
                            lines.append(
                                f"            {escaped(camel(oneof))} = {member_c}.map "
                                f"{{ .{case}({self.decode_message(member, '$0.pointee')}) }}")
                        else:
                            lines.append(
                                f"            {escaped(camel(oneof))} = .{case}({self.decode_value(member, member_c)})")
                    lines.append("        default:")
                    lines.append(f"            {escaped(camel(oneof))} = nil")
                    lines.append("        }")
                elif self.is_presence(field):
                    present = f"source.{self.oneof_name(field.oneof_index)}_case == {self.case_constant(field)}"
                    if field.type == F.TYPE_MESSAGE:
                        if self.field_throws(field):
                            sys.exit(f"generate-swift-wire: {self.name}.{field.name}: a throwing presence field")
                        value = f"{c}.map {{ {self.decode_message(field, '$0.pointee')} }}"
                    else:
                        value = self.decode_value(field, c)
                    lines.append(f"        {name} = {present} ? {value} : nil")
                elif field.label == F.LABEL_REPEATED:
                    count = f"source.n_{field.name}"
                    if field.type in (F.TYPE_UINT64, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_INT32, F.TYPE_DOUBLE):
                        lines.append(f"        {name} = copiedArray({c}, {count})")
                    elif field.type == F.TYPE_MESSAGE and self.field_throws(field):
                        lines.append(
                            f"        {name} = try mappedArray({c}, {count}) {{ (element) throws(HomeError) in "
                            f"{self.decode_message(field, 'element!.pointee')} }}")
                    elif field.type == F.TYPE_MESSAGE:
                        lines.append(
                            f"        {name} = mappedArray({c}, {count}) {{ {self.decode_message(field, '$0!.pointee')} }}")
                    elif field.type == F.TYPE_ENUM and self.model_enum(field):
                        sys.exit(f"generate-swift-wire: {self.name}.{field.name}: a repeated model enum")
                    else:
                        lines.append(f"        {name} = mappedArray({c}, {count}) {{ {self.decode_value(field, '$0')} }}")
                elif field.type == F.TYPE_MESSAGE and self.access:
                    lines.append(f"        if let pointer = {c} {{ {name} = {self.decode_message(field, 'pointer.pointee')} }}")
                elif field.type == F.TYPE_MESSAGE:
                    lines.append(f"        {name} = {c}.map {{ {self.decode_message(field, '$0.pointee')} }}")
                else:
                    lines.append(f"        {name} = {self.decode_value(field, c)}")
            lines.append("    }")
        lines.append("")
        return lines

    # -- Swift -> C --------------------------------------------------------------

    def c_element_type(self, field):
        if field.type in SCALARS:
            return SCALARS[field.type][0]
        if field.type == F.TYPE_BOOL:
            return "protobuf_c_boolean"
        if field.type == F.TYPE_STRING:
            return "UnsafeMutablePointer<CChar>?"
        if field.type == F.TYPE_ENUM:
            return f"Home__V1__{short(field.type_name)}"
        if field.type == F.TYPE_MESSAGE:
            return f"UnsafeMutablePointer<Home__V1__{short(field.type_name)}>?"
        sys.exit(f"generate-swift-wire: repeated {self.name}.{field.name} is not handled")

    def encode_value(self, field, expression):
        """A Swift expression for the C value of one Swift value of the field."""
        if field.type in SCALARS:
            return expression
        if field.type == F.TYPE_BOOL:
            return f"{expression} ? 1 : 0"
        if field.type == F.TYPE_STRING:
            return f"arena.cString({expression})"
        if field.type == F.TYPE_BYTES:
            return f"arena.binary({expression})"
        if field.type == F.TYPE_ENUM:
            number = expression
            if self.model_enum(field):
                optional = self.enum_zero(field) is None and field.label != F.LABEL_REPEATED
                number = f"({expression}?.wireNumber ?? 0)" if optional else f"{expression}.wireNumber"
            return f"Home__V1__{short(field.type_name)}(rawValue: {number})"
        if self.model_message(field) and not self.tabled(field):
            return f"{expression}.wire.build(in: &arena)"
        return f"{expression}.build(in: &arena)"

    def encoder(self):
        lines = [f"    func build(in arena: inout CArena) -> UnsafeMutablePointer<{self.c_type}> {{"]
        lines.append(f"        let built = arena.allocate({self.c_type}.self)")
        lines.append(f"        {self.c_prefix}__init(built)")
        done = set()
        for field in self.message.field:
            name = escaped(camel(field.name))
            target = f"built.pointee.{field.name}"
            if field.HasField("oneof_index") and not self.is_presence(field):
                if field.oneof_index in done:
                    continue
                done.add(field.oneof_index)
                oneof = self.oneof_name(field.oneof_index)
                lines.append(f"        switch {escaped(camel(oneof))} {{")
                for member in self.oneofs[field.oneof_index]:
                    case = escaped(camel(member.name))
                    lines.append(f"        case .{case}(let value)?:")
                    lines.append(f"            built.pointee.{oneof}_case = {self.case_constant(member)}")
                    lines.append(f"            built.pointee.{member.name} = {self.encode_value(member, 'value')}")
                lines.append("        case nil:")
                lines.append("            break")
                lines.append("        }")
            elif field.type == F.TYPE_MESSAGE and not self.is_presence(field) and field.label != F.LABEL_REPEATED:
                empty = MODEL_EMPTY_VALUES.get(short(field.type_name)) if self.model_message(field) else None
                if empty:
                    lines.append(f"        if {name} != {empty} {{ {target} = {self.encode_value(field, name)} }}")
                else:
                    lines.append(f"        if let {name} {{ {target} = {self.encode_value(field, name)} }}")
            else:
                lines += self.encode_field(field, name)
        return lines + self.encoder_end()

    def encode_field(self, field, value):
        """The lines setting a field that is not a oneof of two, nor a lone message,
        from the Swift expression `value`."""
        target = f"built.pointee.{field.name}"
        if self.is_presence(field):
            return [
                f"        if let value = {value} {{",
                f"            built.pointee.{self.oneof_name(field.oneof_index)}_case = {self.case_constant(field)}",
                f"            {target} = {self.encode_value(field, 'value')}",
                "        }",
            ]
        if field.label == F.LABEL_REPEATED:
            return [
                f"        built.pointee.n_{field.name} = {value}.count",
                f"        {target} = arena.array({self.c_element_type(field)}.self, count: {value}.count) "
                "{ arena, index in",
                f"            {self.encode_value(field, f'{value}[index]')}",
                "        }",
            ]
        if field.type == F.TYPE_STRING:
            # protobuf-c's init points an empty string at its own constant.
            return [f"        if !{value}.isEmpty {{ {target} = arena.cString({value}) }}"]
        return [f"        {target} = {self.encode_value(field, value)}"]

    @staticmethod
    def encoder_end():
        return ["        return built", "    }", "}"]

    def wire_message(self):
        if not self.access:
            return []
        return [
            "",
            f"extension {self.name}: WireMessage {{",
            "    public func encode(into buffer: inout ByteBuffer) {",
            "        serialize(into: &buffer)",
            "    }",
            "",
            "    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {",
            "        try self.init(serialized: bytes)",
            "    }",
            "}",
        ]


class TabledWriter(MessageWriter):
    """A message of TABLED_MESSAGES: `init(c:)` and `build(in:)` on the model type
    itself, from the table."""

    def __init__(self, schema, index, message):
        super().__init__(schema, index, message)
        self.model, self.arguments, self.encodings = TABLED_MESSAGES[self.name]
        self.fields = {field.name: field for field in message.field}
        for field in message.field:
            if field.type == F.TYPE_MESSAGE or field.type == F.TYPE_BYTES:
                sys.exit(f"generate-swift-wire: {self.name}.{field.name}: TABLED_MESSAGES handles scalars, strings, "
                         "enums and repeated ones of them")
            if field.HasField("oneof_index") and not self.is_presence(field):
                sys.exit(f"generate-swift-wire: {self.name}.{field.name}: TABLED_MESSAGES handles no oneof of two")
        for name in self.encodings:
            if name not in self.fields:
                sys.exit(f"generate-swift-wire: TABLED_MESSAGES encodes {self.name}.{name}, which is not in the schema")

    def argument(self, argument):
        """(label, expression over the C message `source`) of one initializer argument."""
        label, template = (escaped(camel(argument)), "{" + argument + "}") if isinstance(argument, str) else argument

        def value(match):
            field = self.fields.get(match.group(1))
            if field is None:
                sys.exit(f"generate-swift-wire: TABLED_MESSAGES reads {self.name}.{match.group(1)}, "
                         "which is not in the schema")
            return self.c_value(field)

        return label, re.sub(r"\{(\w+)\}", value, template)

    def c_value(self, field):
        """A Swift expression for the field's value in `source` (an enum's number)."""
        c = f"source.{field.name}"
        if field.label == F.LABEL_REPEATED:
            if field.type in SCALARS:
                return f"copiedArray({c}, source.n_{field.name})"
            return f"mappedArray({c}, source.n_{field.name}) {{ {self.decode_value(field, '$0')} }}"
        value = self.decode_value(field, c)
        if self.is_presence(field):
            return f"(source.{self.oneof_name(field.oneof_index)}_case == {self.case_constant(field)} ? {value} : nil)"
        return value

    def decoder(self):
        read = set()
        for argument in self.arguments:
            template = "{" + argument + "}" if isinstance(argument, str) else argument[1]
            read.update(re.findall(r"\{(\w+)\}", template))
        for field in self.message.field:
            if field.name not in read:
                sys.exit(f"generate-swift-wire: no argument of TABLED_MESSAGES[{self.name!r}] reads {field.name}")
        arguments = [self.argument(argument) for argument in self.arguments]
        lines = [
            f"extension {self.model}: ProtobufCBridged {{",
            f"    static let messageName = \"home.v1.{self.name}\"",
            f"    static var unpack: Unpacker<{self.c_type}> {{ {self.schema.need(self.c_prefix + '__unpack')} }}",
            "",
            f"    init(c source: {self.c_type}) {{",
            "        self.init(",
        ]
        for number, (label, expression) in enumerate(arguments):
            end = ")" if number == len(arguments) - 1 else ","
            lines.append(f"            {label}: {expression}{end}")
        lines += ["    }", ""]
        return lines

    def encoder(self):
        lines = [f"    func build(in arena: inout CArena) -> UnsafeMutablePointer<{self.c_type}> {{"]
        lines.append(f"        let built = arena.allocate({self.c_type}.self)")
        lines.append(f"        {self.c_prefix}__init(built)")
        for field in self.message.field:
            value = self.encodings.get(field.name, f"self.{escaped(camel(field.name))}")
            if field.type == F.TYPE_ENUM:
                # The table gives the number.
                lines.append(f"        built.pointee.{field.name} = Home__V1__{short(field.type_name)}(rawValue: {value})")
            else:
                lines += self.encode_field(field, value)
        return lines + self.encoder_end()


def enum_tables(schema):
    lines = []
    for name, swift in MODEL_ENUMS.items():
        enum = schema.enums[name]
        values = [v for v in enum.value]
        prefix = common_prefix([v.name for v in values])
        mapped = [(v, escaped(camel(v.name[len(prefix):]))) for v in values if v.name not in UNMAPPED_ENUM_VALUES]
        index = list(schema.file.enum_type).index(enum)
        lines.append("")
        lines += schema.doc([5, index], "")
        lines.append(f"extension {swift}: WireEnum {{")
        lines.append(f"    /// The `home.v1.{name}` number of this case.")
        lines.append("    var wireNumber: UInt32 {")
        lines.append("        switch self {")
        for value, case in mapped:
            lines.append(f"        case .{case}: {value.number}")
        lines.append("        }")
        lines.append("    }")
        lines.append("")
        unmapped = [v.name for v in values if v.name in UNMAPPED_ENUM_VALUES]
        note = f" ({', '.join(unmapped)} has none)" if unmapped else ""
        lines.append(f"    /// The case of a `home.v1.{name}` number; nil for a number without one{note}.")
        lines.append("    init?(wireNumber: UInt32) {")
        lines.append("        switch wireNumber {")
        for value, case in mapped:
            lines.append(f"        case {value.number}: self = .{case}")
        lines.append("        default: return nil")
        lines.append("        }")
        lines.append("    }")
        lines.append("}")
    return lines


def method_table(schema):
    """`HomeMethods`: every rpc of the service as a typed descriptor."""
    (service,) = schema.file.service
    index = 0
    lines = [""]
    lines += schema.doc([6, index], "")
    lines.append(f"/// The methods of `service {service.name}` in Protos/home_v1.proto: each pairs its name on")
    lines.append("/// the wire with the Swift types of its request and response, once; the daemon's router")
    lines.append("/// and the clients both use these values.")
    lines.append("public enum HomeMethods {")
    for number, method in enumerate(service.method):
        if method.client_streaming:
            sys.exit(f"generate-swift-wire: {method.name} streams from the client, which the wire does not support")
        request = short(method.input_type)
        response = METHOD_RESPONSE_TYPES.get(method.name, short(method.output_type))
        kind = "ServerStreamingMethod" if method.server_streaming else "UnaryMethod"
        lines += schema.doc([6, index, 2, number], "    ")
        lines.append(f"    public static let {camel(c_snake(method.name))} =")
        lines.append(f"        {kind}<{request}, {response}>(\"home.v1.{service.name}/{method.name}\")")
    lines.append("}")
    return lines


def common_prefix(names):
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix[: prefix.rfind("_") + 1] if "_" in prefix else ""


def main():
    descriptor_path, header_path, output_path = sys.argv[1:4]
    files = descriptor_pb2.FileDescriptorSet()
    with open(descriptor_path, "rb") as handle:
        files.ParseFromString(handle.read())
    (file,) = files.file
    PUBLIC_MESSAGES.update(public_messages(file))
    with open(header_path) as handle:
        schema = Schema(file, handle.read())
    for name in list(MODEL_ENUMS) + sorted(HAND_MAPPED_ENUMS):
        if name not in schema.enums:
            sys.exit(f"generate-swift-wire: enum {name} is configured but not in the schema")
    for enum in file.enum_type:
        if enum.name not in MODEL_ENUMS and enum.name not in HAND_MAPPED_ENUMS:
            sys.exit(f"generate-swift-wire: enum {enum.name} has no Swift type: add it to MODEL_ENUMS")

    out = [
        "// swift-format-ignore-file",
        "// Generated by Scripts/generate-swift-wire.py from Protos/home_v1.proto. Do not edit:",
        "// edit the schema and run Scripts/generate-proto.sh.",
        "",
        "internal import CHomeProto",
        "public import HomeModel",
        "public import NIOCore",
        "",
        "/// The messages of `package home.v1` as Swift values, field for field. The",
        "/// public API's own types map onto these in Codec/.",
        "enum Proto {}",
        "",
        "extension Proto {",
    ]
    writers = [(TabledWriter if m.name in TABLED_MESSAGES else MessageWriter)(schema, index, m)
               for index, m in enumerate(file.message_type)]
    first = True
    for writer in writers:
        if writer.access or isinstance(writer, TabledWriter):
            continue
        if not first:
            out.append("")
        first = False
        out += writer.declaration()
    out.append("}")
    for writer in writers:
        if writer.access:
            out.append("")
            out += writer.declaration()
    for writer in writers:
        out.append("")
        out += writer.decoder()
        out += writer.encoder()
        out += writer.wire_message()
    out += enum_tables(schema)
    out += method_table(schema)
    with open(output_path, "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
