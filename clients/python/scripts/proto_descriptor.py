"""Reads a protobuf descriptor set (``proto/gen/image.binpb``) with the standard library only.

Only the parts of ``google/protobuf/descriptor.proto`` that the client generator needs are
decoded: files, messages, fields, enums, services, methods, the ``google.api`` field behaviours,
resource patterns and HTTP rules, and the comments from ``SourceCodeInfo``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Field numbers of the google.api extensions used by the protos.
FIELD_BEHAVIOR_EXT = 1052
RESOURCE_EXT = 1053
HTTP_EXT = 72295728

FIELD_BEHAVIORS = {
    1: "OPTIONAL",
    2: "REQUIRED",
    3: "OUTPUT_ONLY",
    4: "INPUT_ONLY",
    5: "IMMUTABLE",
    6: "UNORDERED_LIST",
    7: "NON_EMPTY_DEFAULT",
    8: "IDENTIFIER",
}

TYPE_NAMES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
    8: "bool", 9: "string", 10: "group", 11: "message", 12: "bytes", 13: "uint32", 14: "enum",
    15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64",
}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields_of(data: bytes) -> list[tuple[int, int, object]]:
    """Splits one encoded message into (field number, wire type, value) triples."""
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _packed_varints(value: object, wire: int) -> list[int]:
    if wire == 0:
        return [int(value)]  # type: ignore[arg-type]
    out = []
    pos = 0
    data = bytes(value)  # type: ignore[arg-type]
    while pos < len(data):
        item, pos = _varint(data, pos)
        out.append(item)
    return out


@dataclass
class Field:
    name: str
    number: int
    label: int
    type: str
    type_name: str
    json_name: str
    proto3_optional: bool
    behaviors: list[str]
    comment: str = ""
    map_entry: "Message | None" = None

    @property
    def repeated(self) -> bool:
        return self.label == 3 and self.map_entry is None


@dataclass
class EnumValue:
    name: str
    number: int
    deprecated: bool
    comment: str = ""


@dataclass
class Enum:
    full_name: str
    name: str
    values: list[EnumValue]
    comment: str = ""


@dataclass
class Message:
    full_name: str
    name: str
    fields: list[Field]
    is_map_entry: bool
    resource_pattern: str = ""
    comment: str = ""


@dataclass
class HttpRule:
    verb: str
    path: str
    body: str
    response_body: str


@dataclass
class Method:
    name: str
    full_name: str
    input_type: str
    output_type: str
    server_streaming: bool
    http: HttpRule | None
    comment: str = ""


@dataclass
class Service:
    full_name: str
    name: str
    methods: list[Method]
    comment: str = ""


@dataclass
class DescriptorSet:
    messages: dict[str, Message] = field(default_factory=dict)
    enums: dict[str, Enum] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)


def _clean_comment(text: str) -> str:
    lines = [line[1:] if line.startswith(" ") else line for line in text.split("\n")]
    return "\n".join(lines).strip()


def _http_rule(data: bytes) -> HttpRule | None:
    verb = path = body = response_body = ""
    for number, _, value in fields_of(data):
        if number in (2, 3, 4, 5, 6):
            verb = {2: "GET", 3: "PUT", 4: "POST", 5: "DELETE", 6: "PATCH"}[number]
            path = bytes(value).decode()  # type: ignore[arg-type]
        elif number == 8:
            custom = {n: bytes(v).decode() for n, _, v in fields_of(value)}  # type: ignore[arg-type]
            verb, path = custom.get(1, "").upper(), custom.get(2, "")
        elif number == 7:
            body = bytes(value).decode()  # type: ignore[arg-type]
        elif number == 12:
            response_body = bytes(value).decode()  # type: ignore[arg-type]
    return HttpRule(verb, path, body, response_body) if verb else None


def _read_field(data: bytes) -> Field:
    name = type_name = json_name = ""
    number = label = type_code = 0
    proto3_optional = False
    behaviors: list[str] = []
    for num, wire, value in fields_of(data):
        if num == 1:
            name = bytes(value).decode()  # type: ignore[arg-type]
        elif num == 3:
            number = int(value)  # type: ignore[arg-type]
        elif num == 4:
            label = int(value)  # type: ignore[arg-type]
        elif num == 5:
            type_code = int(value)  # type: ignore[arg-type]
        elif num == 6:
            type_name = bytes(value).decode().lstrip(".")  # type: ignore[arg-type]
        elif num == 10:
            json_name = bytes(value).decode()  # type: ignore[arg-type]
        elif num == 17:
            proto3_optional = bool(value)
        elif num == 8:
            for onum, owire, ovalue in fields_of(value):  # type: ignore[arg-type]
                if onum == FIELD_BEHAVIOR_EXT:
                    behaviors += [FIELD_BEHAVIORS.get(b, str(b)) for b in _packed_varints(ovalue, owire)]
    return Field(name, number, label, TYPE_NAMES[type_code], type_name, json_name, proto3_optional, behaviors)


class _Reader:
    def __init__(self) -> None:
        self.out = DescriptorSet()
        self.comments: dict[tuple[int, ...], str] = {}
        self.messages_by_path: list[tuple[tuple[int, ...], object]] = []

    def read_file(self, data: bytes) -> None:
        self.comments = {}
        package = ""
        parts = fields_of(data)
        for num, _, value in parts:
            if num == 2:
                package = bytes(value).decode()  # type: ignore[arg-type]
            elif num == 9:
                self._read_comments(value)  # type: ignore[arg-type]
        message_index = enum_index = service_index = 0
        for num, _, value in parts:
            if num == 4:
                self._read_message(value, package, (4, message_index))  # type: ignore[arg-type]
                message_index += 1
            elif num == 5:
                self._read_enum(value, package, (5, enum_index))  # type: ignore[arg-type]
                enum_index += 1
            elif num == 6:
                self._read_service(value, package, (6, service_index))  # type: ignore[arg-type]
                service_index += 1

    def _read_comments(self, data: bytes) -> None:
        for num, _, location in fields_of(data):
            if num != 1:
                continue
            path: list[int] = []
            leading = ""
            for lnum, lwire, lvalue in fields_of(location):  # type: ignore[arg-type]
                if lnum == 1:
                    path += _packed_varints(lvalue, lwire)
                elif lnum == 3:
                    leading = bytes(lvalue).decode()  # type: ignore[arg-type]
            if leading:
                self.comments[tuple(path)] = _clean_comment(leading)

    def _read_message(self, data: bytes, scope: str, path: tuple[int, ...]) -> Message:
        parts = fields_of(data)
        name = next(bytes(v).decode() for n, _, v in parts if n == 1)  # type: ignore[arg-type]
        full_name = f"{scope}.{name}"
        is_map_entry = False
        pattern = ""
        for num, _, value in parts:
            if num == 7:
                for onum, _, ovalue in fields_of(value):  # type: ignore[arg-type]
                    if onum == 7:
                        is_map_entry = bool(ovalue)
                    elif onum == RESOURCE_EXT:
                        for rnum, _, rvalue in fields_of(ovalue):  # type: ignore[arg-type]
                            if rnum == 2 and not pattern:
                                pattern = bytes(rvalue).decode()  # type: ignore[arg-type]
        message = Message(full_name, name, [], is_map_entry, pattern, self.comments.get(path, ""))
        self.out.messages[full_name] = message
        field_index = nested_index = enum_index = 0
        for num, _, value in parts:
            if num == 2:
                f = _read_field(value)  # type: ignore[arg-type]
                f.comment = self.comments.get(path + (2, field_index), "")
                message.fields.append(f)
                field_index += 1
            elif num == 3:
                self._read_message(value, full_name, path + (3, nested_index))  # type: ignore[arg-type]
                nested_index += 1
            elif num == 4:
                self._read_enum(value, full_name, path + (4, enum_index))  # type: ignore[arg-type]
                enum_index += 1
        return message

    def _read_enum(self, data: bytes, scope: str, path: tuple[int, ...]) -> None:
        parts = fields_of(data)
        name = next(bytes(v).decode() for n, _, v in parts if n == 1)  # type: ignore[arg-type]
        values = []
        index = 0
        for num, _, value in parts:
            if num != 2:
                continue
            vname = ""
            vnumber = 0
            deprecated = False
            for vnum, _, vvalue in fields_of(value):  # type: ignore[arg-type]
                if vnum == 1:
                    vname = bytes(vvalue).decode()  # type: ignore[arg-type]
                elif vnum == 2:
                    vnumber = int(vvalue)  # type: ignore[arg-type]
                elif vnum == 3:
                    deprecated = any(onum == 1 and ovalue for onum, _, ovalue in fields_of(vvalue))  # type: ignore[arg-type]
            values.append(EnumValue(vname, vnumber, deprecated, self.comments.get(path + (2, index), "")))
            index += 1
        full_name = f"{scope}.{name}"
        self.out.enums[full_name] = Enum(full_name, name, values, self.comments.get(path, ""))

    def _read_service(self, data: bytes, package: str, path: tuple[int, ...]) -> None:
        parts = fields_of(data)
        name = next(bytes(v).decode() for n, _, v in parts if n == 1)  # type: ignore[arg-type]
        full_name = f"{package}.{name}"
        methods = []
        index = 0
        for num, _, value in parts:
            if num != 2:
                continue
            mname = input_type = output_type = ""
            streaming = False
            http = None
            for mnum, _, mvalue in fields_of(value):  # type: ignore[arg-type]
                if mnum == 1:
                    mname = bytes(mvalue).decode()  # type: ignore[arg-type]
                elif mnum == 2:
                    input_type = bytes(mvalue).decode().lstrip(".")  # type: ignore[arg-type]
                elif mnum == 3:
                    output_type = bytes(mvalue).decode().lstrip(".")  # type: ignore[arg-type]
                elif mnum == 6:
                    streaming = bool(mvalue)
                elif mnum == 4:
                    for onum, _, ovalue in fields_of(mvalue):  # type: ignore[arg-type]
                        if onum == HTTP_EXT:
                            http = _http_rule(ovalue)  # type: ignore[arg-type]
            methods.append(Method(mname, f"{full_name}.{mname}", input_type, output_type, streaming, http,
                                  self.comments.get(path + (2, index), "")))
            index += 1
        self.out.services[full_name] = Service(full_name, name, methods, self.comments.get(path, ""))


def read_descriptor_set(data: bytes) -> DescriptorSet:
    """Decodes a serialized ``google.protobuf.FileDescriptorSet``."""
    reader = _Reader()
    for num, _, value in fields_of(data):
        if num == 1:
            reader.read_file(value)  # type: ignore[arg-type]
    # Map fields point at their synthetic *Entry message.
    for message in reader.out.messages.values():
        for f in message.fields:
            if f.type == "message":
                target = reader.out.messages.get(f.type_name)
                if target is not None and target.is_map_entry:
                    f.map_entry = target
    return reader.out
